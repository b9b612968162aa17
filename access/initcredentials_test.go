package access_test

import (
	"encoding/json"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// TestInitCredentials: connection_init's payload names the credential under the documented
// names only, as the headers that would carry it; anything that could be read two ways is refused
// REQ_400.000.
func TestInitCredentials(t *testing.T) {
	for _, c := range []struct {
		name          string
		payload       string
		key, auth     string
		refused       bool
		ignoredHeader bool
	}{
		{name: "none", payload: `null`},
		{name: "empty", payload: `{}`},
		{name: "api-key", payload: `{"api-key":"k"}`, key: "k"},
		{name: "apiKey", payload: `{"apiKey":"k"}`, key: "k"},
		{name: "Authorization", payload: `{"Authorization":"Bearer t"}`, auth: "Bearer t"},
		{name: "authorization", payload: `{"authorization":"Bearer t"}`, auth: "Bearer t"},
		{name: "both headers", payload: `{"api-key":"k","Authorization":"Bearer t"}`, key: "k", auth: "Bearer t"},
		{name: "two spellings agreeing", payload: `{"api-key":"k","apiKey":"k"}`, key: "k"},
		{name: "empty values", payload: `{"api-key":"","authorization":""}`},
		{name: "other names", payload: `{"API-KEY":"k","Api-Key":"k","headers":{"api-key":"k"},"token":"t"}`},
		{name: "two spellings differing", payload: `{"api-key":"k","apiKey":"j"}`, refused: true},
		{name: "Authorization twice differing", payload: `{"Authorization":"Bearer a","authorization":"Bearer b"}`, refused: true},
		{name: "a number", payload: `{"api-key":1}`, refused: true},
		{name: "null value", payload: `{"apiKey":null}`, refused: true},
		{name: "a list", payload: `{"authorization":["Bearer t"]}`, refused: true},
		{name: "an object", payload: `{"Authorization":{"Bearer":"t"}}`, refused: true},
		{name: "a boolean", payload: `{"api-key":true}`, refused: true},
	} {
		var p map[string]any
		if err := json.Unmarshal([]byte(c.payload), &p); err != nil {
			t.Fatal(err)
		}
		creds, err := access.InitCredentials(p)
		if c.refused {
			if flightgraph.ErrorCode(err) != flightgraph.ECodeBadBody {
				t.Errorf("%s: %v %v, want %s", c.name, creds, err, flightgraph.ECodeBadBody)
			}
			continue
		}
		if err != nil || creds.Get("api-key") != c.key || creds.Get("Authorization") != c.auth || len(creds) > 2 {
			t.Errorf("%s: %v %v, want api-key %q Authorization %q", c.name, creds, err, c.key, c.auth)
		}
	}
}

// FuzzInitCredentials: whatever a connection_init payload holds, InitCredentials returns the
// api-key and Authorization headers only, each the value of one of the documented names, or
// refuses it REQ_400.000; never a panic, never a header of another name or a value the payload
// did not give under a documented name.
//
//	go test ./access -run '^$' -fuzz FuzzInitCredentials -fuzztime 1m
func FuzzInitCredentials(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"api-key":"fgk_x"}`, `{"apiKey":"a","api-key":"a"}`, `{"Authorization":"Bearer t","authorization":"Bearer u"}`,
		`{"api-key":1}`, `{"apiKey":[1]}`, `{"authorization":{"a":1}}`, `{"api-key":"","apiKey":"x"}`, `{"x":"y"}`, `{"api-key":"a\u0000\r\nb"}`} {
		f.Add(s)
	}
	names := map[string]string{"api-key": "Api-Key", "apiKey": "Api-Key", "Authorization": "Authorization", "authorization": "Authorization"}
	f.Fuzz(func(t *testing.T, s string) {
		var p map[string]any
		if json.Unmarshal([]byte(s), &p) != nil {
			return // gqlgen refuses it before (the connection is closed 4400)
		}
		creds, err := access.InitCredentials(p)
		if err != nil {
			if flightgraph.ErrorCode(err) != flightgraph.ECodeBadBody {
				t.Fatalf("%s: %v", s, err)
			}
			return
		}
		for header, values := range creds {
			if header != "Api-Key" && header != "Authorization" || len(values) != 1 || values[0] == "" {
				t.Fatalf("%s: %s %q", s, header, values)
			}
			found := false
			for name, v := range p {
				if names[name] == header && v == values[0] {
					found = true
				}
			}
			if !found {
				t.Fatalf("%s: %s %q is no value of the payload's", s, header, values[0])
			}
		}
		for name, v := range p {
			if h, ok := names[name]; ok && v != "" && creds.Get(h) == "" {
				t.Fatalf("%s: %s was not read", s, name)
			}
		}
	})
}
