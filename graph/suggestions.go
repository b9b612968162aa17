package graph

import (
	"context"
	"regexp"
	"strings"

	"github.com/vektah/gqlparser/v2/validator/core"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// Suggestions shows each caller the validator's "Did you mean …?" of what it may see. gqlgen
// validates a document once for every caller (its query cache keeps the validated document), and
// the validator suggests from the whole schema: a developer mistyping a field would be offered
// the partners' bestOffersFeed or the staff's cargoCapacity. So a suggested name that only the
// part of the schema outside the caller's audience defines (the root fields of APIs it may not
// see, the types only they reach, and those types' fields, arguments and values) is cut from the
// message; anonymous callers get no suggestion at all, since the schema is not open to them.
//
// What each audience sees is its view of the schema (Views), which introspection answers from too.
type Suggestions struct {
	views *Views
}

// NewSuggestions returns the Suggestions of views.
func NewSuggestions(views *Views) *Suggestions { return &Suggestions{views: views} }

// For returns msg, a parse or validation error's message, as the caller of ctx may read it. A nil
// Suggestions only cuts anonymous callers' suggestions.
func (s *Suggestions) For(ctx context.Context, msg string) string {
	caller := flightgraph.CallerFromContext(ctx)
	if caller.Kind == flightgraph.CallerAnonymous {
		return withoutSuggestions(msg)
	}
	if s == nil || !strings.Contains(msg, didYouMean) {
		return msg
	}
	return filterSuggestions(msg, s.views.of(access.Audience(caller.Role())).hidden)
}

// didYouMean starts the suggestion that every rule that suggests puts last ("… on type \"Query\".
// Did you mean \"flight\"?", "… Did you mean the enum value \"SIT\"?").
const didYouMean = " Did you mean "

// withoutSuggestions cuts the validator's "Did you mean …?" from a message.
func withoutSuggestions(msg string) string {
	if i := strings.Index(msg, didYouMean); i >= 0 {
		return strings.TrimRight(msg[:i], " ;")
	}
	return msg
}

// quotedName is one name of a suggestion's list ("flight", or "legs { ... }").
var quotedName = regexp.MustCompile(`"([^"]*)"`)

// filterSuggestions cuts from msg's suggestion the names in hidden, and the whole suggestion when
// none is left; the list keeps the validator's wording ("a", "b", or "c").
func filterSuggestions(msg string, hidden map[string]bool) string {
	i := strings.Index(msg, didYouMean)
	if i < 0 || len(hidden) == 0 {
		return msg
	}
	head, list := msg[:i], strings.TrimSuffix(msg[i+len(didYouMean):], "?")
	q := strings.IndexByte(list, '"')
	if q < 0 {
		return msg
	}
	var names, kept []string
	for _, m := range quotedName.FindAllStringSubmatch(list[q:], -1) {
		names = append(names, m[1])
		if name, _, _ := strings.Cut(m[1], " "); !hidden[name] {
			kept = append(kept, m[1])
		}
	}
	switch len(kept) {
	case len(names):
		return msg
	case 0:
		return strings.TrimRight(head, " ;")
	}
	return head + didYouMean + list[:q] + core.QuotedOrList(kept...) + "?"
}
