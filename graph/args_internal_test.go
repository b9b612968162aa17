package graph

import (
	"context"
	"errors"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestFieldArgsOncePerField: under a request's loaders, a field's arguments are made once
// however many objects it is resolved on, and each field has its own; arguments that fail are
// made again for each object, which reports its own error; without loaders (a subscription's
// event) they are made every time.
func TestFieldArgsOncePerField(t *testing.T) {
	name := graphql.CollectedField{Field: &ast.Field{Name: "name",
		Arguments:  ast.ArgumentList{{Name: "language", Value: &ast.Value{Kind: ast.Variable, Raw: "lang"}}},
		Definition: &ast.FieldDefinition{Arguments: ast.ArgumentDefinitionList{{Name: "language", Type: ast.NamedType("Language", nil)}}}}}
	code := graphql.CollectedField{Field: &ast.Field{Name: "code"}}
	vars := map[string]any{"lang": "FR"}
	var made int
	args := func(_ context.Context, raw map[string]any) (map[string]any, error) {
		made++
		return map[string]any{"language": raw["language"]}, nil
	}
	ctx := WithLoaders(context.Background(), &Loaders{})
	for range 25 {
		got, err := fieldArgs(ctx, name, vars, args)
		if err != nil || got["language"] != "FR" {
			t.Fatalf("args %v, %v", got, err)
		}
	}
	if made != 1 {
		t.Errorf("25 objects' name made its arguments %d times, want 1", made)
	}
	if _, err := fieldArgs(ctx, code, vars, args); err != nil || made != 2 {
		t.Errorf("another field's arguments: made %d times in all (want 2), %v", made, err)
	}

	bad := errors.New("no such language")
	var failed int
	failing := func(context.Context, map[string]any) (map[string]any, error) {
		failed++
		return nil, bad
	}
	other := graphql.CollectedField{Field: &ast.Field{Name: "name"}}
	for range 3 {
		if _, err := fieldArgs(ctx, other, vars, failing); !errors.Is(err, bad) {
			t.Fatalf("failing arguments: %v", err)
		}
	}
	if failed != 3 {
		t.Errorf("failing arguments were made %d times for 3 objects, want 3", failed)
	}

	made = 0
	for range 3 {
		fieldArgs(context.Background(), name, vars, args)
	}
	if made != 3 {
		t.Errorf("without loaders, 3 objects made the arguments %d times, want 3", made)
	}
}
