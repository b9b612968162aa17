package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// envGraphQLHTTP names the folder of the GraphQL-over-HTTP audit tool (test/graphql-http) with its
// node_modules installed.
const envGraphQLHTTP = "FLIGHTGRAPH_TEST_GRAPHQL_HTTP"

// TestGraphQLOverHTTPAudit runs graphql-http's server audit (the package pinned in
// test/graphql-http: every MUST, SHOULD and MAY of the GraphQL-over-HTTP spec it checks) against
// both GraphQL endpoints of a real server, and fails on any audit that does not pass, listing
// them. /graphql is called with the demo key on the test plan, the most an operator may grant,
// so that the audit measures the protocol and not the limiter; /portal/graphql with the demo
// developer's portal session.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	tool, node := graphQLHTTPTool(t)
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	for _, c := range []struct {
		path    string
		headers []string
	}{
		{"/graphql", []string{"api-key=" + s.demo.APIKey}},
		{"/portal/graphql", []string{"Authorization=Bearer " + s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).token}},
	} {
		t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
			out, err := audit(t, tool, node, s.URL+c.path, c.headers...)
			t.Logf("graphql-http audit of %s:\n%s", c.path, out)
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit) && exit.ExitCode() == 1:
				var failed []string
				for line := range strings.Lines(out) {
					if !strings.HasPrefix(line, "ok ") && strings.Contains(line, ": ") {
						failed = append(failed, strings.TrimSpace(line))
					}
				}
				t.Errorf("%s fails %d audits of GraphQL over HTTP:\n%s", c.path, len(failed), strings.Join(failed, "\n"))
			case err != nil:
				t.Fatalf("node audit.mjs: %v", err) // a bad argument or a missing module proves nothing
			}
		})
	}
}

// graphQLHTTPTool returns the audit tool's folder and node. When either is missing the test skips
// with a message, or fails in CI (CI=true), where .ci/run installs the tool.
func graphQLHTTPTool(t *testing.T) (dir, node string) {
	t.Helper()
	dir = os.Getenv(envGraphQLHTTP)
	node, err := exec.LookPath("node")
	const how = "run `npm ci --prefix test/graphql-http` and set " + envGraphQLHTTP + "=$PWD/test/graphql-http (CI does)"
	switch {
	case dir == "":
		err = errors.New(envGraphQLHTTP + " is not set")
	case err != nil:
		err = errors.New("node is not on PATH")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v: CI audits GraphQL over HTTP; %s", err, how)
		}
		t.Skipf("%v: this test audits GraphQL over HTTP with graphql-http; %s", err, how)
	}
	// A folder that is set but not installed fails, as a URL set to a service that is down does.
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "graphql-http")); err != nil {
		t.Fatalf("%s=%s has no graphql-http: %s", envGraphQLHTTP, dir, how)
	}
	return dir, node
}

// audit runs the audit tool against url, sending the NAME=VALUE headers with every request, and
// returns what it printed.
func audit(t *testing.T, dir, node, url string, headers ...string) (string, error) {
	t.Helper()
	// The audit takes about a second; the bound only keeps a hung node from holding the run.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "audit.mjs"), url}, headers...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("node audit.mjs: %v\n%s", ctx.Err(), out)
	}
	return string(out), err
}

// TestGraphQLStatusesByMediaType: the statuses and shapes the GraphQL-over-HTTP spec asks for, per
// media type, on both endpoints' transport: request errors answer 200 as application/json and 400
// as application/graphql-response+json, without a data entry either way; a request that is not a
// GraphQL request is 400 under both; an Accept naming neither type is 406; access refusals keep
// their status. Each case would fail if its rule were removed (the audit above checks only some).
func TestGraphQLStatusesByMediaType(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	const (
		js = "application/json"
		gr = "application/graphql-response+json"
	)
	key := s.demo.APIKey
	for _, c := range []struct {
		name, accept, body string
		noKey              bool
		status             int
		code               string // of the first error; "" for none
		data               bool   // whether the answer has a data entry
	}{
		{"executed", js, `{"query":"{ __typename }"}`, false, 200, "", true},
		{"executed, graphql-response", gr, `{"query":"{ __typename }"}`, false, 200, "", true},
		{"parse failure", js, `{"query":"{"}`, false, 200, "GRAPHQL_PARSE_FAILED", false},
		{"parse failure, graphql-response", gr, `{"query":"{"}`, false, 400, "GRAPHQL_PARSE_FAILED", false},
		{"validation failure", js, `{"query":"{ nope }"}`, false, 200, "GRAPHQL_VALIDATION_FAILED", false},
		{"validation failure, graphql-response", gr, `{"query":"{ nope }"}`, false, 400, "GRAPHQL_VALIDATION_FAILED", false},
		{"coercion failure", js, `{"query":"query($b: Boolean!) { __typename @include(if: $b) }","variables":{"b":"yes"}}`, false, 200, "GRAPHQL_VALIDATION_FAILED", false},
		{"coercion failure, graphql-response", gr, `{"query":"query($b: Boolean!) { __typename @include(if: $b) }","variables":{"b":"yes"}}`, false, 400, "GRAPHQL_VALIDATION_FAILED", false},
		{"no query", js, `{"qeury":"{ __typename }"}`, false, 400, "INSP_400.000", false},
		{"no query, graphql-response", gr, `{"qeury":"{ __typename }"}`, false, 400, "INSP_400.000", false},
		{"not JSON", js, `{"query":`, false, 400, "REQ_400.000", false},
		{"no Accept", "", `{"query":"{ nope }"}`, false, 200, "GRAPHQL_VALIDATION_FAILED", false},
		{"wildcard", "*/*", `{"query":"{ nope }"}`, false, 200, "GRAPHQL_VALIDATION_FAILED", false},
		{"preferred graphql-response", gr + ", " + js + ";q=0.9", `{"query":"{ nope }"}`, false, 400, "GRAPHQL_VALIDATION_FAILED", false},
		{"html only", "text/html", `{"query":"{ __typename }"}`, false, 406, "INSP_406.000", false},
		{"json refused", js + ";q=0", `{"query":"{ __typename }"}`, false, 406, "INSP_406.000", false},
		{"no credential", js, `{"query":"{ __schema { queryType { name } } }"}`, true, 401, "AUTH_401.000", false},
		{"no credential, graphql-response", gr, `{"query":"{ __schema { queryType { name } } }"}`, true, 401, "AUTH_401.000", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{"api-key": key}
			if c.noKey {
				h = map[string]string{}
			}
			if c.accept != "" {
				h["Accept"] = c.accept
			}
			status, header, raw := s.call(t, http.MethodPost, "/graphql", h, c.body)
			var got map[string]json.RawMessage
			if err := json.Unmarshal([]byte(raw), &got); err != nil {
				t.Fatalf("%d %s: not JSON: %v", status, raw, err)
			}
			_, hasData := got["data"]
			var errs []struct{ Extensions map[string]any }
			json.Unmarshal(got["errors"], &errs)
			code := ""
			if len(errs) > 0 {
				code, _ = errs[0].Extensions["code"].(string)
			}
			if status != c.status || code != c.code || hasData != c.data {
				t.Fatalf("got %d %s (data entry: %v), want %d %q (data entry: %v)", status, raw, hasData, c.status, c.code, c.data)
			}
			if want := c.accept; status == 200 && want != gr && !strings.HasPrefix(want, gr) && header.Get("Content-Type") != js {
				t.Errorf("Content-Type %q, want %s", header.Get("Content-Type"), js)
			}
		})
	}
}
