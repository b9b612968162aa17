package travel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestMailSearchBounds: the per-mailbox bound counts a mailbox however its address is spelt
// (case, subaddress, a provider's ignored dots), and one key has at most
// MaxSearchMailsPerClientPerDay searches mailed to anyone, on both dialects; an address at an IP
// address is refused.
func TestMailSearchBounds(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		as := func(key string) context.Context {
			return flightgraph.WithCaller(context.Background(), &flightgraph.Caller{Kind: flightgraph.CallerKey, KeyID: key})
		}
		q := func() *flightgraph.OfferSearch { return search("AMS", "CDG", 2, "ADT") }
		for i, spelling := range []string{"ada.lovelace@gmail.com", "AdaLovelace@gmail.com", "ada.lovelace+flights@gmail.com", "a.d.a.lovelace@googlemail.com", "adalovelace+x@GMAIL.com"} {
			if _, _, err := e.MailSearch(as("key-a"), spelling, q()); err != nil {
				t.Fatalf("mail %d to %s: %v", i+1, spelling, err)
			}
		}
		if _, _, err := e.MailSearch(as("key-b"), "ada.lovelace+more@gmail.com", q()); flightgraph.ErrorCode(err) != flightgraph.ECodeTooManyMails {
			t.Errorf("a sixth mail to the same mailbox, from another key: %v", err)
		}
		if _, _, err := e.MailSearch(as("key-b"), "ada@[127.0.0.1]", q()); flightgraph.ErrorCode(err) != flightgraph.ECodeInvalidParameter {
			t.Errorf("an address at an IP address: %v", err)
		}

		for i := range flightgraph.MaxSearchMailsPerClientPerDay - 5 {
			if _, _, err := e.MailSearch(as("key-a"), fmt.Sprintf("stranger%d@example.com", i), q()); err != nil {
				t.Fatalf("mail %d of key-a: %v", i+6, err)
			}
		}
		_, _, err := e.MailSearch(as("key-a"), "one.more.stranger@example.com", q())
		var ferr *flightgraph.Error
		if flightgraph.ErrorCode(err) != flightgraph.ECodeTooManyMails || !errors.As(err, &ferr) || ferr.RetryAfter <= 0 {
			t.Errorf("key-a's mail %d: %v, want ECodeTooManyMails with a Retry-After", flightgraph.MaxSearchMailsPerClientPerDay+1, err)
		}
		if _, _, err := e.MailSearch(as("key-b"), "one.more.stranger@example.com", q()); err != nil {
			t.Errorf("another key is not held by key-a's count: %v", err)
		}
	})
}
