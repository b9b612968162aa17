// Command gen generates the flight subgraph's executor (graph/generated.go) and its resolver
// stubs from gqlgen.yml as `gqlgen generate` does, then replaces two of gqlgen's calls in the
// executor with graph's own, of the same meaning (graph/lists.go):
//
//   - graphql.MarshalSliceConcurrently, which starts a goroutine for every element of a list of
//     objects whatever the element's fields, by marshalList;
//   - graphql.GetPath, which every object computes (allocating its path) for the @defer groups it
//     hands to ProcessDeferredGroup even when it has none, by deferredPath, which also takes the
//     groups and builds the path only for some (ProcessDeferredGroup reads it only then).
//
// Each call must be found, else gqlgen generates otherwise now and this needs a look. Run it
// from the repository's root: go generate ./...
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

// replaced are gqlgen's calls and ours, in the order they are replaced.
var replaced = []struct{ gqlgen, ours string }{
	{"graphql.MarshalSliceConcurrently(", "marshalList("},
	{"Path:     graphql.GetPath(ctx),", "Path:     deferredPath(ctx, deferLabelToView),"},
}

func main() {
	if err := generate("gqlgen.yml"); err != nil {
		fmt.Fprintln(os.Stderr, "graph/gen:", err)
		os.Exit(1)
	}
}

func generate(file string) error {
	cfg, err := config.LoadConfig(file)
	if err != nil {
		return err
	}
	if err := api.Generate(cfg); err != nil {
		return err
	}
	src, err := os.ReadFile(cfg.Exec.Filename)
	if err != nil {
		return err
	}
	// marshalList takes gqlgen's arguments, so that a gqlgen whose call differs fails to build
	// rather than running otherwise.
	for _, r := range replaced {
		if !bytes.Contains(src, []byte(r.gqlgen)) {
			return fmt.Errorf("%s has no %s: gqlgen generates otherwise now; see graph/lists.go", cfg.Exec.Filename, r.gqlgen)
		}
		src = bytes.ReplaceAll(src, []byte(r.gqlgen), []byte(r.ours))
	}
	return os.WriteFile(cfg.Exec.Filename, src, 0o644)
}
