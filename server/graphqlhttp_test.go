package server_test

import (
	"context"
	"errors"
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
