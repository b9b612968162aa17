package graph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

func format(doc *ast.QueryDocument) string {
	var b strings.Builder
	formatter.NewFormatter(&b).FormatQueryDocument(doc)
	return b.String()
}

// TestWithoutDefer: every @defer goes, at any depth and in fragments, other directives stay, and
// the document it came from, shared through the query cache, is left exactly as it was; a
// document without @defer is returned as it is.
func TestWithoutDefer(t *testing.T) {
	const src = `query Q($x: Boolean!) {
  a { b ... @defer(label: "l") { c ...F @defer @include(if: $x) } }
  ... @defer { d }
}
query Other { z }
fragment F on T { e ... on T @defer { f ...G } }
fragment G on T { g }`
	doc, err := parser.ParseQuery(&ast.Source{Input: src})
	if err != nil {
		t.Fatal(err)
	}
	before := format(doc)
	out, op, changed := withoutDefer(doc, doc.Operations[0])
	if !changed || op != out.Operations[0] || out.Operations[1] != doc.Operations[1] {
		t.Fatalf("changed %v, operation %p of %p", changed, op, out.Operations[0])
	}
	if got := format(doc); got != before {
		t.Errorf("the shared document changed:\n%s\nwas\n%s", got, before)
	}
	after := format(out)
	if strings.Contains(after, "@defer") {
		t.Errorf("@defer left in:\n%s", after)
	}
	if strings.Count(after, "@include(if: $x)") != 1 || !strings.Contains(after, "fragment G") {
		t.Errorf("more than @defer went:\n%s", after)
	}
	if out.Fragments.ForName("G") != doc.Fragments.ForName("G") {
		t.Error("a fragment without @defer was copied")
	}

	plain, _ := parser.ParseQuery(&ast.Source{Input: `{ a { b ...F } } fragment F on T { c }`})
	if out, op, changed := withoutDefer(plain, plain.Operations[0]); changed || out != plain || op != plain.Operations[0] {
		t.Errorf("a document without @defer: changed %v", changed)
	}
}
