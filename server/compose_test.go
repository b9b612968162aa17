package server_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// envCompose names the folder of the compose tool (test/compose) with its node_modules installed.
const envCompose = "FLIGHTGRAPH_TEST_COMPOSE"

// accountsSubgraph is another team's subgraph with a me, a signIn and an Account of its own: what
// a company's supergraph composes beside the flight subgraph.
const accountsSubgraph = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])

type Query {
  me: Account
  apis: [String!]!
}

type Mutation {
  signIn(email: String!, password: String!): Account
}

type Account @key(fields: "id") {
  id: ID!
  email: String!
}
`

// extendingSubgraph is another team's subgraph that adds a field to each of the flight
// subgraph's entities, by their keys: it composes only if each of them is an entity with that key.
const extendingSubgraph = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])

type Query {
  alliances: [String!]!
}

type Flight @key(fields: "id") { id: ID! co2Kg: Int }
type FlightLeg @key(fields: "id") { id: ID! meals: [String!] }
type Airport @key(fields: "code") { code: String! lounges: Int }
type Carrier @key(fields: "code") { code: String! alliance: String }
type Aircraft @key(fields: "registration") { registration: String! lastCheck: String }
type AircraftConfiguration @key(fields: "configuration") { configuration: String! seatMapUrl: String }
type Route @key(fields: "id") { id: ID! emissionsKg: Int }
`

// portalInTheSubgraph is what the flight subgraph held before the portal moved out, cut to the
// field that clashes: a me of another type than the accounts subgraph's.
const portalInTheSubgraph = `
type Me {
  id: ID!
}

extend type Query {
  me: Me
}
`

// TestSupergraphComposes composes the flight subgraph's SDL, as /graphql serves it, with an
// accounts subgraph using Apollo's composer (@apollo/composition, in test/compose), as a company's
// router build would. A string check of the SDL (TestPortalIsNotInTheSubgraph) cannot tell
// whether the composer accepts it. The control appends a portal-like me to the same SDL and must
// be refused, so that a pass shows the composer would have caught the old layout. The SDL is a
// public credential's, which names neither partner nor internal APIs.
func TestSupergraphComposes(t *testing.T) {
	tool, node := composeTool(t)
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	sdl := s.subgraphSDL(t)
	dir := t.TempDir()
	flights := writeSDL(t, dir, "flights.graphql", sdl)
	accounts := writeSDL(t, dir, "accounts.graphql", accountsSubgraph)
	extending := writeSDL(t, dir, "extending.graphql", extendingSubgraph)

	supergraph := filepath.Join(dir, "supergraph.graphql")
	out, err := compose(t, tool, node, "--supergraph="+supergraph, "flights="+flights, "accounts="+accounts, "extending="+extending)
	if err != nil {
		t.Fatalf("the flight subgraph does not compose with an accounts subgraph and one that extends its entities: %v\n%s", err, out)
	}
	roots := map[string][]string{}
	for line := range strings.Lines(out) {
		if root, fields, ok := strings.Cut(strings.TrimSpace(line), ": "); ok {
			roots[root] = strings.Fields(fields)
		}
	}
	for _, want := range [][2]string{{"Query", "flights"}, {"Query", "airport"}, {"Query", "me"}, {"Mutation", "signIn"}} {
		if !slices.Contains(roots[want[0]], want[1]) {
			t.Errorf("the supergraph has no %s.%s:\n%s", want[0], want[1], out)
		}
	}
	// The SDL of a public credential is the public contract: neither the partners' nor the
	// staff's APIs (TestSchemaFollowsAudience), nor their cache hints.
	for _, hidden := range []string{"bestOffersFeed", "cargoCapacity", "CargoCapacity"} {
		if slices.Contains(roots["Query"], hidden) || strings.Contains(sdl, hidden) {
			t.Errorf("a public credential's supergraph names %s:\n%s", hidden, out)
		}
	}
	// Not even a hint: a platform team's composition check would flag it.
	if strings.Contains(out, "HINT ") {
		t.Errorf("composition gives hints:\n%s", out)
	}
	// The cache hints reach the supergraph (@composeDirective), where gateways that cache by
	// them (Hive Gateway's response cache) read them: an airport for a day, a flight's status for
	// seconds, an offer privately.
	super, err := os.ReadFile(supergraph)
	if err != nil {
		t.Fatal(err)
	}
	doc, gerr := parser.ParseSchema(&ast.Source{Name: "supergraph", Input: string(super)})
	if gerr != nil {
		t.Fatalf("the supergraph does not parse: %v", gerr)
	}
	hint := func(dirs ast.DirectiveList) string {
		if d := dirs.ForName("cacheControl"); d != nil {
			var args []string
			for _, a := range d.Arguments {
				args = append(args, a.Name+": "+a.Value.String())
			}
			return strings.Join(args, ", ")
		}
		return ""
	}
	typeHint := func(name string) string {
		if def := doc.Definitions.ForName(name); def != nil {
			return hint(def.Directives)
		}
		return "no type " + name
	}
	fieldHint := func(typ, field string) string {
		if def := doc.Definitions.ForName(typ); def != nil && def.Fields.ForName(field) != nil {
			return hint(def.Fields.ForName(field).Directives)
		}
		return "no field " + typ + "." + field
	}
	for _, c := range [][2]string{
		{typeHint("Airport"), "maxAge: 86400"},
		{typeHint("Offer"), "maxAge: 60, scope: PRIVATE"},
		{fieldHint("Flight", "status"), "maxAge: 15"},
		{fieldHint("Query", "flights"), "maxAge: 3600"},
	} {
		if c[0] != c[1] {
			t.Errorf("a supergraph hint is %q, want %q", c[0], c[1])
		}
	}
	if doc.Directives.ForName("cacheControl") == nil {
		t.Error("the supergraph does not define @cacheControl")
	}

	withPortal := writeSDL(t, dir, "flights-with-portal.graphql", sdl+"\n"+portalInTheSubgraph)
	out, err = compose(t, tool, node, "flights="+withPortal, "accounts="+accounts)
	// Exit 1 is a composition error; anything else (a bad file, a missing module) proves nothing.
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, "Query.me") {
		t.Fatalf("a portal me in the flight subgraph: %v\n%s\nwant composition errors on Query.me", err, out)
	}
}

// composeTool returns the compose tool's folder and node. When either is missing the test skips
// with a message, or fails in CI (CI=true), where .ci/run installs the tool.
func composeTool(t *testing.T) (dir, node string) {
	t.Helper()
	dir = os.Getenv(envCompose)
	node, err := exec.LookPath("node")
	const how = "run `npm ci --prefix test/compose` and set " + envCompose + "=$PWD/test/compose (CI does)"
	switch {
	case dir == "":
		err = errors.New(envCompose + " is not set")
	case err != nil:
		err = errors.New("node is not on PATH")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v: CI composes the supergraph; %s", err, how)
		}
		t.Skipf("%v: this test composes the supergraph with Apollo's composer; %s", err, how)
	}
	// A folder that is set but not installed fails, as a URL set to a service that is down does.
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@apollo", "composition")); err != nil {
		t.Fatalf("%s=%s has no @apollo/composition: %s", envCompose, dir, how)
	}
	return dir, node
}

// compose runs the compose tool on NAME=FILE pairs and returns what it printed.
func compose(t *testing.T, dir, node string, subgraphs ...string) (string, error) {
	t.Helper()
	// Composition takes about a second; the bound only keeps a hung node from holding the run.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "compose.mjs")}, subgraphs...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("node compose.mjs: %v\n%s", ctx.Err(), out)
	}
	return string(out), err
}

func writeSDL(t *testing.T, dir, name, sdl string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(sdl), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
