package flightgraph_test

import (
	"testing"

	"github.com/flightgraph/flightgraph"
)

// TestValidateEmail: an address is printable ASCII, so that one mailbox has one spelling for
// every bound that counts per address; an international domain takes its xn-- form.
func TestValidateEmail(t *testing.T) {
	for email, want := range map[string]string{
		"ada@example.com":                "",
		"ada+portal@xn--bcher-kva.de":    "",
		"":                               flightgraph.ECodeMissingParameter,
		"ada@example":                    flightgraph.ECodeInvalidParameter,
		"ada@ex\u00adample.com":          flightgraph.ECodeInvalidParameter, // a soft hyphen
		"ada@\uff45xample.com":           flightgraph.ECodeInvalidParameter, // a full-width e
		"ada@example.com\u200b":          flightgraph.ECodeInvalidParameter, // a zero-width space
		"ad\x00a@example.com":            flightgraph.ECodeInvalidParameter,
		"ada@bücher.de":                  flightgraph.ECodeInvalidParameter,
		"Ada Lovelace <ada@example.com>": flightgraph.ECodeInvalidParameter,
	} {
		if got := flightgraph.ErrorCode(flightgraph.ValidateEmail(email)); got != want {
			t.Errorf("%q: %q, want %q", email, got, want)
		}
	}
}
