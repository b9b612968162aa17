package graph

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
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
type Suggestions struct {
	schema *ast.Schema
	hidden sync.Map // audience → map[string]bool
}

// NewSuggestions returns the Suggestions of schema.
func NewSuggestions(schema *ast.Schema) *Suggestions { return &Suggestions{schema: schema} }

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
	return filterSuggestions(msg, s.hiddenFrom(access.Audience(caller.Role())))
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

// hiddenFrom returns the names that only the part of the schema outside audience defines: the
// names the schema defines anywhere (types, fields, arguments, input fields, enum values), less
// those of the part the audience sees, which is what the root types, the directives, the
// introspection types and the built-in scalars reach, without a field or type whose @api names an
// API outside the audience. It is computed once per audience.
func (s *Suggestions) hiddenFrom(audience string) map[string]bool {
	if v, ok := s.hidden.Load(audience); ok {
		return v.(map[string]bool)
	}
	sees := map[string]bool{}
	for _, slug := range strings.Split(audience, ",") {
		sees[slug] = true
	}
	outside := func(dirs ast.DirectiveList) bool { p := apiOf(dirs); return p != "" && !sees[p] }
	visible, reached := map[string]bool{}, map[string]bool{}
	var reach func(name string)
	reach = func(name string) {
		def := s.schema.Types[name]
		if reached[name] || def == nil || outside(def.Directives) {
			return
		}
		reached[name] = true
		visible[name] = true
		for _, f := range def.Fields {
			if outside(f.Directives) {
				continue
			}
			visible[f.Name] = true
			for _, a := range f.Arguments {
				visible[a.Name] = true
				reach(a.Type.Name())
			}
			reach(f.Type.Name())
		}
		for _, v := range def.EnumValues {
			visible[v.Name] = true
		}
		for _, i := range def.Interfaces {
			reach(i)
		}
		if def.Kind == ast.Union || def.Kind == ast.Interface {
			for _, t := range s.schema.GetPossibleTypes(def) {
				reach(t.Name)
			}
		}
	}
	for _, root := range []*ast.Definition{s.schema.Query, s.schema.Mutation, s.schema.Subscription} {
		if root != nil {
			reach(root.Name)
		}
	}
	for name, def := range s.schema.Types {
		if strings.HasPrefix(name, "__") || def.BuiltIn && def.Kind == ast.Scalar {
			reach(name)
		}
	}
	for _, d := range s.schema.Directives {
		visible[d.Name] = true
		for _, a := range d.Arguments {
			visible[a.Name] = true
			reach(a.Type.Name())
		}
	}
	hidden := map[string]bool{}
	add := func(name string) {
		if !visible[name] {
			hidden[name] = true
		}
	}
	for name, def := range s.schema.Types {
		add(name)
		for _, f := range def.Fields {
			add(f.Name)
			for _, a := range f.Arguments {
				add(a.Name)
			}
		}
		for _, v := range def.EnumValues {
			add(v.Name)
		}
	}
	v, _ := s.hidden.LoadOrStore(audience, hidden)
	return v.(map[string]bool)
}
