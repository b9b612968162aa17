package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestMailMySearch: a search is mailed through the outbox with its record, on both edges; an
// address gets MaxSearchMailsPerDay mails in 24 hours however its spelling varies and whichever
// edge asks, and a refusal records and sends nothing; bad input is refused before anything is
// written.
func TestMailMySearch(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), nil)
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, ""), "Content-Type": "application/json"}
		const addr = "traveller@example.com"
		records := func() int {
			var n int
			if err := storetest.SQL(t, s.db).QueryRow(`SELECT COUNT(*) FROM mailed_searches`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		mail := func(email string, search map[string]any) (int, string) {
			code, _, body := s.call(t, http.MethodPost, "/opendata/offers/v1/mail-my-search", bearer, jsonOf(map[string]any{"email": email, "search": search}))
			return code, body
		}

		code, body := mail(addr, offerSearch("AMS", "NYC", "ADT", "CHD"))
		var got struct {
			ID, Status    string
			CheapestOffer productView
		}
		if code != http.StatusAccepted || json.Unmarshal([]byte(body), &got) != nil || got.Status != "QUEUED" || got.CheapestOffer.ID == "" {
			t.Fatalf("mail-my-search: %d %s", code, body)
		}
		mails := s.mailsTo(t, addr)
		if len(mails) != 1 || !strings.Contains(mails[0].Subject, "AMS to NYC") || !strings.Contains(mails[0].Body, got.CheapestOffer.ID) ||
			!strings.Contains(mails[0].Body, got.CheapestOffer.Price.TotalPrice+" "+got.CheapestOffer.Price.Currency) {
			t.Fatalf("mails: %+v, answer %+v", mails, got)
		}
		if strings.Contains(mails[0].Body, s.demo.ClientSecret) || strings.Contains(mails[0].Body, s.demo.APIKey) {
			t.Fatal("the mail carries the caller's credentials")
		}
		if records() != 1 {
			t.Fatalf("%d records after one mail", records())
		}
		// The cheapest offer the mail names is the cheapest the search gives.
		v, _ := searchOffers(t, s, bearer, offerSearch("AMS", "NYC", "ADT", "CHD"))
		for _, it := range v.Itineraries {
			for _, p := range it.FlightProducts {
				if amount(t, p.Price.TotalPrice) < amount(t, got.CheapestOffer.Price.TotalPrice) {
					t.Errorf("the search gives %s for %s, the mail names %s as cheapest", p.Price.TotalPrice, p.ID, got.CheapestOffer.Price.TotalPrice)
				}
			}
		}

		t.Run("bad input writes nothing", func(t *testing.T) {
			for _, c := range []struct {
				name, email string
				search      map[string]any
				status      int
				code        string
			}{
				{"no address", "", offerSearch("AMS", "NYC", "ADT"), 400, flightgraph.ECodeMissingParameter},
				{"not an address", "traveller at example.com", offerSearch("AMS", "NYC", "ADT"), 400, flightgraph.ECodeInvalidParameter},
				{"a header in the address", "a@example.com\r\nBcc: b@example.com", offerSearch("AMS", "NYC", "ADT"), 400, flightgraph.ECodeInvalidParameter},
				{"an address at an IP address", "traveller@[127.0.0.1]", offerSearch("AMS", "NYC", "ADT"), 400, flightgraph.ECodeInvalidParameter},
				{"no cabins", addr, map[string]any{"passengers": []any{}}, 400, flightgraph.ECodeMissingParameter},
				{"an unknown airport", addr, offerSearch("QQQ", "NYC", "ADT"), 404, flightgraph.ECodeIATANotFound},
			} {
				code, body := mail(c.email, c.search)
				if code != c.status || restCode(t, body) != c.code {
					t.Errorf("%s: %d %s, want %d %s", c.name, code, body, c.status, c.code)
				}
			}
			if records() != 1 || len(s.mailsTo(t, addr)) != 1 {
				t.Errorf("refusals wrote %d records, %d mails", records(), len(s.mailsTo(t, addr)))
			}
		})

		t.Run("an address gets five a day", func(t *testing.T) {
			for i, spelling := range []string{"Traveller@Example.com", " traveller@example.com"} {
				if code, body := mail(spelling, offerSearch("AMS", "PAR", "ADT")); code != http.StatusAccepted {
					t.Fatalf("mail %d: %d %s", i+2, code, body)
				}
			}
			r := s.queryAs(t, bearer, `mutation($e: String!, $s: OfferSearchInput!) { mailMySearch(email: $e, search: $s) { id cheapestOffer { id price { total { amount } } } } }`,
				map[string]any{"e": addr, "s": gqlSearch("AMS", "PAR", "ADT")})
			var g struct {
				MailMySearch struct {
					ID            string
					CheapestOffer *struct{ ID string }
				}
			}
			if err := json.Unmarshal(r.Data, &g); err != nil || len(r.Errors) > 0 || g.MailMySearch.ID == "" || g.MailMySearch.CheapestOffer == nil {
				t.Fatalf("GraphQL: %s %+v", r.Data, r.Errors)
			}
			if code, body := mail(addr, offerSearch("AMS", "PAR", "ADT")); code != http.StatusAccepted {
				t.Fatalf("mail 5: %d %s", code, body)
			}
			for _, spelling := range []string{"TRAVELLER@example.com", "traveller+flights@example.com"} {
				code, body := mail(spelling, offerSearch("AMS", "PAR", "ADT"))
				if code != http.StatusTooManyRequests || restCode(t, body) != flightgraph.ECodeTooManyMails {
					t.Errorf("mail 6 to %s: %d %s", spelling, code, body)
				}
			}
			if gqlCode(t, jsonOf(s.queryAs(t, bearer, `mutation($e: String!, $s: OfferSearchInput!) { mailMySearch(email: $e, search: $s) { id } }`,
				map[string]any{"e": addr, "s": gqlSearch("AMS", "PAR", "ADT")}))) != flightgraph.ECodeTooManyMails {
				t.Error("GraphQL: mail 6 was sent")
			}
			if n, m := records(), len(s.mailsTo(t, addr)); n != 5 || m != 5 {
				t.Errorf("%d records, %d mails; want 5 of each", n, m)
			}
			// Another address is not held by this one's count.
			if code, body := mail("other@example.com", offerSearch("AMS", "PAR", "ADT")); code != http.StatusAccepted {
				t.Errorf("another address: %d %s", code, body)
			}
		})

		t.Run("at once, still five", func(t *testing.T) {
			// Ten requests at once for a fresh address: without the recipient's lock, PostgreSQL's
			// read-committed transactions would each count fewer than five and all send.
			codes := make(chan int, 10)
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					code, _ := mail("burst@example.com", offerSearch("AMS", "PAR", "ADT"))
					codes <- code
				})
			}
			wg.Wait()
			close(codes)
			by := map[int]int{}
			for c := range codes {
				by[c]++
			}
			if by[http.StatusAccepted] != flightgraph.MaxSearchMailsPerDay || by[http.StatusTooManyRequests] != 10-flightgraph.MaxSearchMailsPerDay {
				t.Errorf("ten at once: %v", by)
			}
			if m := len(s.mailsTo(t, "burst@example.com")); m != flightgraph.MaxSearchMailsPerDay {
				t.Errorf("%d mails sent", m)
			}
		})
	})
}
