package travel

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// MailSearch is mail-my-search: it runs the search and mails its summary and its cheapest offer
// now to email, recording the search with the mail in one transaction. Bad input is the search's
// errors or ValidateEmail's; a mailbox (CanonicalMailbox) that had MaxSearchMailsPerDay mails in
// the last 24 hours, or a client (the caller's key) that had MaxSearchMailsPerClientPerDay mailed,
// is ECodeTooManyMails, and nothing is recorded or sent. Within those daily counts the mail spends
// from the service's mail budget (MailBudget, MailAsked): past its mailbox's or its client
// address's it is ECodeTooManyMails too, past the replica's ECodeMailBusy, each with the wait. It
// returns the record and the cheapest offer (nil when the search found none).
func (s *Service) MailSearch(ctx context.Context, email string, q *flightgraph.OfferSearch) (*flightgraph.MailedSearch, *flightgraph.Offer, error) {
	email = flightgraph.NormalizeEmail(email)
	if err := flightgraph.ValidateEmail(email); err != nil {
		return nil, nil, err
	}
	if s.MailBudget == nil {
		return nil, nil, errors.New("travel: no mail budget is configured to bound mail-my-search")
	}
	offers, err := s.OffersFor(ctx, q, 0)
	if err != nil {
		return nil, nil, err
	}
	var cheapest *flightgraph.Offer
	for _, o := range offers {
		if cheapest == nil || o.Price.Total.Minor < cheapest.Price.Total.Minor {
			cheapest = o
		}
	}
	search, err := json.Marshal(q)
	if err != nil {
		return nil, nil, err
	}
	now := s.Now().UTC()
	rec := &flightgraph.MailedSearch{ID: "ms_" + rand.Text()[:20], RecipientHash: flightgraph.MailboxHash(s.OfferKey, "mailed-search-recipient", email),
		ClientID: flightgraph.CallerFromContext(ctx).KeyID, Search: string(search), CreatedAt: now}
	err = s.Searches.InSearchTx(ctx, func(tx flightgraph.SearchTx) error {
		if err := tx.LockMailCounts(ctx, rec.RecipientHash, rec.ClientID); err != nil {
			return err
		}
		since := now.Add(-24 * time.Hour)
		recent, err := tx.RecentMailedSearches(ctx, rec.RecipientHash, since, flightgraph.MaxSearchMailsPerDay)
		if err == nil {
			err = dayFull(recent, flightgraph.MaxSearchMailsPerDay, now, "email", "this address was mailed %d searches in the last 24 hours, as many as it gets")
		}
		if err != nil {
			return err
		}
		sent, err := tx.ClientMailedSearches(ctx, rec.ClientID, since, flightgraph.MaxSearchMailsPerClientPerDay)
		if err == nil {
			err = dayFull(sent, flightgraph.MaxSearchMailsPerClientPerDay, now, "", "this application had %d searches mailed in the last 24 hours, as many as one gets")
		}
		if err != nil {
			return err
		}
		// Spent last, so that the daily counts' refusals cost the budget nothing.
		if err := s.MailBudget.Spend(ctx, flightgraph.MailCharge{Kind: flightgraph.MailAsked, To: []string{email}}); err != nil {
			return err
		}
		if err := tx.RecordMailedSearch(ctx, rec); err != nil {
			return err
		}
		return tx.EnqueueMail(ctx, searchMail(email, q, len(offers), cheapest))
	})
	if err != nil {
		return nil, nil, err
	}
	return rec, cheapest, nil
}

// dayFull refuses with ECodeTooManyMails when the mails of the last 24 hours (newest first) are
// max already; another may go when the oldest of them is a day old.
func dayFull(mailed []time.Time, max int, now time.Time, param, format string) error {
	if len(mailed) < max {
		return nil
	}
	return &flightgraph.Error{Code: flightgraph.ECodeTooManyMails, Parameter: param, RetryAfter: mailed[len(mailed)-1].Add(24 * time.Hour).Sub(now),
		Message: fmt.Sprintf(format, len(mailed))}
}

// searchMail is the mail of a search: what was asked, what it found, and the cheapest offer
// with its id (valid for OfferValidity).
func searchMail(to string, q *flightgraph.OfferSearch, found int, cheapest *flightgraph.Offer) *flightgraph.Mail {
	c := q.Connections[0]
	var pax []string
	for _, p := range q.Passengers {
		pax = append(pax, strings.ToUpper(p.Type))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your flight search, as you asked us to mail it.\n\n")
	fmt.Fprintf(&b, "From %s to %s on %s", c.Origin, c.Destination, c.DepartureDate)
	if len(q.Connections) > 1 {
		fmt.Fprintf(&b, ", back on %s", q.Connections[1].DepartureDate)
	}
	fmt.Fprintf(&b, "\nPassengers: %s\n\n", strings.Join(pax, ", "))
	if cheapest == nil {
		b.WriteString("No seats were for sale on that day when you searched.\n")
	} else {
		s := cheapest.Segments[0].Flight
		fmt.Fprintf(&b, "%d offers were found. The cheapest: %s %s, %s in %s (%s), leaving %s.\n", found,
			cheapest.Price.Total.Decimal(), cheapest.Price.Total.Currency, s.Designator(), cheapest.Family.Name, cheapest.Cabin,
			cheapest.Departure().Format(time.RFC3339))
		fmt.Fprintf(&b, "Its price holds until %s, with the offer id\n%s\n", cheapest.ExpiresAt.Format(time.RFC3339), cheapest.ID)
	}
	b.WriteString("\nPrices change as seats sell: search again for today's.\n")
	return &flightgraph.Mail{To: to, Subject: fmt.Sprintf("Your search: %s to %s on %s", c.Origin, c.Destination, c.DepartureDate), Body: b.String()}
}
