package server_test

import (
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestAttackHiddenNamesAnswerAsUnknown (finding, open): introspection and suggestions are cut to
// the caller's audience, but documents are validated against the whole schema, so a developer
// can tell a hidden name from one that does not exist by the error it gets, and confirm guessed
// partner/internal names one by one:
//
//	{ __typename ... on CargoCapacity { __typename } }  → "Fragment cannot be spread here … \"CargoCapacity\""
//	{ __typename ... on NoSuchType { __typename } }     → "Unknown type \"NoSuchType\"."
//	fragment F on CargoCapacity {…} { __typename }       → only "Fragment \"F\" is never used."
//	{ cargoCapacity(flightId: "x") { __typename } }      → INSP_404.000 UNKNOWN_PATH
//	{ noSuchField }                                      → "Cannot query field \"noSuchField\" on type \"Query\"."
//	{ cargoCapacity { __typename } }                     → "Field \"cargoCapacity\" argument \"flightId\" of type \"ID!\" is required"
//	{ bestOffersFeed { __typename } }                    → "… argument \"search\" of type \"DealSearchInput!\" is required"
//
// so a hidden field's arguments and their types can be read off the errors too.
//
// A contract variant answers a hidden name as it answers an unknown one. Suggested fix: validate
// against the caller's cut (graph.AudienceSchema / graph.Views) rather than the whole schema, or
// rewrite validation errors that name something outside the cut into the unknown-name ones.
// Skipped unless FLIGHTGRAPH_ATTACK=1, so as not to break the suite before the fix.
func TestAttackHiddenNamesAnswerAsUnknown(t *testing.T) {
	if os.Getenv("FLIGHTGRAPH_ATTACK") == "" {
		t.Skip("open finding: set FLIGHTGRAPH_ATTACK=1 to run")
	}
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	errOf := func(q string) string {
		t.Helper()
		r := s.query(t, q, nil) // the demo key: a developer's, no cargo, no metasearch
		if len(r.Errors) == 0 {
			return ""
		}
		return r.Errors[0].Message + " " + r.Errors[0].Extensions["code"].(string)
	}
	for _, p := range []struct{ hidden, unknown string }{
		{`{ __typename ... on CargoCapacity { __typename } }`, `{ __typename ... on NoSuchType { __typename } }`},
		{`fragment F on CargoLeg { __typename } { __typename }`, `fragment F on NoSuchType { __typename } { __typename }`},
		{`{ cargoCapacity { __typename } }`, `{ noSuchField { __typename } }`},
		{`{ bestOffersFeed { __typename } }`, `{ noSuchField { __typename } }`},
	} {
		h := errOf(p.hidden)
		hn := h
		for _, name := range []string{"CargoCapacity", "CargoLeg", "cargoCapacity", "bestOffersFeed"} {
			hn = strings.ReplaceAll(hn, name, "X")
		}
		un := strings.NewReplacer("NoSuchType", "X", "noSuchField", "X").Replace(errOf(p.unknown))
		if hn != un {
			t.Errorf("a hidden name answers otherwise than an unknown one:\n  %s → %s\n  %s → %s", p.hidden, h, p.unknown, errOf(p.unknown))
		}
	}
}
