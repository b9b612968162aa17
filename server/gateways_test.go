package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// envGateways names the folder of the gateways (test/gateways) with its node_modules installed.
const envGateways = "FLIGHTGRAPH_TEST_GATEWAYS"

// gatewayReady is the line a gateway or subgraph script prints once it listens, with its port
// (and, for hive.mjs serving two gateways, the second's).
var gatewayReady = regexp.MustCompile(`ready on (\d+)(?: ws (\d+))?`)

// TestGatewaysPassCodes puts the two gateways a company may run in front of the flight subgraph,
// Hive Gateway and Apollo Gateway (the packages pinned in test/gateways), and checks that a
// client of each sees flightgraph's own refusals: the codes of the access refusals and, for the
// per-second limit, LIMIT_429.000 with the retry time in extensions.retryAfter. flightgraph
// answers those refusals with HTTP 401, 403 and 429; Hive Gateway passes the subgraph's errors
// through as they are, and Apollo Gateway does so with the data source of test/gateways/apollo.mjs,
// whose errorFromResponse lifts the subgraph's first error (Apollo's own turns any non-2xx answer
// into an opaque "429: Too Many Requests"). The control sends the same refusal straight to
// flightgraph, which answers HTTP 429 with a Retry-After header.
func TestGatewaysPassCodes(t *testing.T) {
	tool, node := gatewaysTool(t)
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	dir := t.TempDir()
	sdl := writeSDL(t, dir, "flights.graphql", s.subgraphSDL(t))
	supergraph := composeSupergraph(t, tool, node, s.URL+"/graphql", sdl)
	gateways := []struct{ name, url string }{
		{"hive", startGateway(t, tool, node, "hive.mjs", supergraph)},
		{"apollo", startGateway(t, tool, node, "apollo.mjs", supergraph)},
	}

	flights := `{ flights(origin: "AMS", date: "` + storetest.Now.Format(flightgraph.DateLayout) + `", first: 1) { totalCount } }`
	offers := `query($s: OfferSearchInput!) { availableOffers(search: $s) { id } }`
	offersVars := map[string]any{"s": gqlSearch("AMS", "JFK", "ADT")}
	key := map[string]string{"api-key": s.demo.APIKey}
	bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
	for _, gw := range gateways {
		t.Run(gw.name, func(t *testing.T) {
			if a := gatewayCall(t, gw.url, key, flights, nil); len(a.Errors) > 0 || !bytes.Contains(a.Data, []byte(`"totalCount"`)) {
				t.Fatalf("flights with the demo key: %s %+v, want data: the gateway does not forward the api-key", a.Data, a.Errors)
			}
			for _, c := range []struct {
				name    string
				headers map[string]string
				query   string
				vars    map[string]any
				code    string
			}{
				{"no credentials", nil, flights, nil, flightgraph.ECodeMissingCredentials},
				{"a token on an api-key API", bearer, flights, nil, flightgraph.ECodeWrongCredential},
				{"an api-key on an OAuth API", key, offers, offersVars, flightgraph.ECodeWrongCredential},
			} {
				a := gatewayCall(t, gw.url, c.headers, c.query, c.vars)
				t.Logf("%s, %s: %s", gw.name, c.name, a.raw)
				if got := a.code(); got != c.code {
					t.Errorf("%s: code %q, want %s: %s", c.name, got, c.code, a.raw)
				}
			}
		})
	}

	// One call a second, on a frozen clock: the calls above fill the second, which never ends, so
	// every call of flights from now on is over the limit.
	s.setPlanLimits(t, "flightstatus", flightgraph.Limits{PerSecond: 1, PerDay: 1000})
	for _, gw := range gateways {
		t.Run(gw.name+" over the limit", func(t *testing.T) {
			var a gatewayAnswer
			for range 3 {
				if a = gatewayCall(t, gw.url, key, flights, nil); a.code() != "" {
					break
				}
			}
			t.Logf("%s, over one call a second: %s", gw.name, a.raw)
			if a.code() != flightgraph.ECodePerSecondLimit {
				t.Fatalf("code %q, want %s: %s", a.code(), flightgraph.ECodePerSecondLimit, a.raw)
			}
			if after, _ := a.Errors[0].Extensions["retryAfter"].(float64); after < 1 {
				t.Errorf("extensions.retryAfter %v, want at least 1 second: %s", a.Errors[0].Extensions["retryAfter"], a.raw)
			}
		})
	}
	t.Run("direct over the limit", func(t *testing.T) {
		status, h, body := s.call(t, http.MethodPost, "/graphql", key, jsonBody(flights, nil))
		if status != http.StatusTooManyRequests || gqlCode(t, body) != flightgraph.ECodePerSecondLimit {
			t.Fatalf("straight to flightgraph: %d %s, want 429 %s", status, body, flightgraph.ECodePerSecondLimit)
		}
		if after, err := strconv.Atoi(h.Get("Retry-After")); err != nil || after < 1 {
			t.Errorf("Retry-After %q, want at least 1 second", h.Get("Retry-After"))
		}
	})
}

// gatewaysTool returns the gateways' folder and node. When either is missing the test skips with
// a message, or fails in CI (CI=true), where .ci/run installs the gateways.
func gatewaysTool(t *testing.T) (dir, node string) {
	t.Helper()
	dir = os.Getenv(envGateways)
	node, err := exec.LookPath("node")
	const how = "run `npm ci --prefix test/gateways` and set " + envGateways + "=$PWD/test/gateways (CI does)"
	switch {
	case dir == "":
		err = errors.New(envGateways + " is not set")
	case err != nil:
		err = errors.New("node is not on PATH")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v: CI runs the subgraph behind Hive Gateway and Apollo Gateway; %s", err, how)
		}
		t.Skipf("%v: this test runs the subgraph behind Hive Gateway and Apollo Gateway; %s", err, how)
	}
	// A folder that is set but not installed fails, as a URL set to a service that is down does.
	for _, module := range []string{"@graphql-hive/gateway", "@apollo/gateway", "@apollo/server", "@apollo/composition"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", module)); err != nil {
			t.Fatalf("%s=%s has no %s: %s", envGateways, dir, module, how)
		}
	}
	return dir, node
}

// composeSupergraph composes the subgraph SDL in file, served at url, into a supergraph and
// returns the path of the supergraph's SDL.
func composeSupergraph(t *testing.T, dir, node, url, file string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "supergraph.mjs"), "flights", url, file)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node supergraph.mjs: %v\n%s", err, stderr.Bytes())
	}
	return writeSDL(t, filepath.Dir(file), "supergraph.graphql", string(out))
}

// startGateway starts a gateway script on the supergraph, on a port of its choosing, and returns
// its GraphQL endpoint once it is ready. The gateway is stopped when the test ends.
func startGateway(t *testing.T, dir, node, script, supergraph string) string {
	t.Helper()
	return startNodeScript(t, dir, node, script, supergraph, "0")
}

// startNodeScript starts a script of the gateways' folder that listens on a port of its choosing
// (a gateway, a subgraph) and returns its GraphQL endpoint once it prints that it is ready. The
// script is stopped when the test ends.
func startNodeScript(t *testing.T, dir, node, script string, args ...string) string {
	t.Helper()
	return launchNodeScript(t, dir, node, script, args...)()[0]
}

// launchNodeScript is startNodeScript without the wait: it returns a function that waits until
// the script is ready and returns its endpoints (the second gateway's too, when it serves two),
// to be called on the test's goroutine. Scripts launched together start together.
func launchNodeScript(t *testing.T, dir, node, script string, args ...string) (ready func() []string) {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	return func() []string {
		t.Helper()
		// A gateway starts in a second or two; the bound is for a loaded machine.
		deadline := time.After(time.Minute)
		for {
			if m := gatewayReady.FindStringSubmatch(out.String()); m != nil {
				var endpoints []string
				for _, port := range m[1:] {
					if port != "" {
						endpoints = append(endpoints, "http://127.0.0.1:"+port+"/graphql")
					}
				}
				return endpoints
			}
			select {
			case err := <-exited:
				exited <- err
				t.Fatalf("node %s exited before it was ready: %v\n%s", script, err, out)
			case <-deadline:
				t.Fatalf("node %s is not ready after a minute:\n%s", script, out)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// gatewayAnswer is a GraphQL answer as a gateway's client sees it.
type gatewayAnswer struct {
	gqlResponse
	// raw is the answer's status, Retry-After header and body, for messages.
	raw string
}

// code is the first error's extensions.code, "" when there is none.
func (a gatewayAnswer) code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	code, _ := a.Errors[0].Extensions["code"].(string)
	return code
}

// gatewayCall posts a GraphQL operation to a gateway with headers and decodes the answer.
func gatewayCall(t *testing.T, url string, headers map[string]string, query string, vars map[string]any) gatewayAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewBufferString(jsonBody(query, vars)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json, application/json;q=0.9")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := gatewayAnswer{raw: fmt.Sprintf("HTTP %d (Retry-After %q) %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)}
	if err := json.Unmarshal(body, &a.gqlResponse); err != nil {
		t.Fatalf("%s: not JSON: %v", a.raw, err)
	}
	return a
}
