package graph

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponseMatchesGqlgen: the answer written without re-encoding is the JSON document
// gqlgen's transport writes through json.Marshal, field for field and in the same order. The one
// difference is that json.Marshal escapes <, > and & inside strings as \u003c and so on, which
// decodes to the same text; and an answer without data (the operation did not execute) has no
// data entry, where gqlgen writes "data":null.
func TestWriteResponseMatchesGqlgen(t *testing.T) {
	truth := true
	for _, c := range []struct {
		name string
		resp *graphql.Response
	}{
		{"data", &graphql.Response{Data: json.RawMessage(`{"flights":{"totalCount":2,"edges":[{"node":{"id":"20261122+XX+0001","name":"é <b>&"}}]}}`)}},
		{"null data with errors", &graphql.Response{Data: jsonNull, Errors: gqlerror.List{{Message: "nope <x>", Path: ast.Path{ast.PathName("flight")},
			Extensions: map[string]any{"code": "FLIGHT_404.001", "status": 404}}}}},
		{"not executed", &graphql.Response{Errors: gqlerror.List{{Message: "Expected Name, found <EOF>"}}}},
		{"not executed with extensions", &graphql.Response{Errors: gqlerror.List{{Message: "over the limit"}}, Extensions: map[string]any{"cost": 3}}},
		{"partial", &graphql.Response{Data: json.RawMessage(`{"a":null,"b":1}`), Errors: gqlerror.List{{Message: "a failed"}},
			Extensions: map[string]any{"complexity": 12}}},
		{"incremental", &graphql.Response{Data: json.RawMessage(`{"x":1}`), Label: "l", HasNext: &truth}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := json.Marshal(c.resp)
			if err != nil {
				t.Fatal(err)
			}
			if c.resp.Data == nil {
				want = bytes.Replace(want, []byte(`,"data":null`), nil, 1)
			}
			var got bytes.Buffer
			writeResponse(&got, c.resp)
			var g, w any
			if err := json.Unmarshal(got.Bytes(), &g); err != nil {
				t.Fatalf("not JSON: %s", got.Bytes())
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) || keyOrder(got.Bytes()) != keyOrder(want) {
				t.Fatalf("written %s\nwant    %s", got.Bytes(), want)
			}
		})
	}
}

// keyOrder lists the top-level keys of a JSON object in order.
func keyOrder(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token()
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	return strings.Join(keys, ",")
}
