// Command gen generates the flight subgraph's executor (graph/generated.go) and its resolver
// stubs from gqlgen.yml as `gqlgen generate` does, then has the executor marshal its lists of
// objects with graph's marshalList instead of gqlgen's graphql.MarshalSliceConcurrently, which
// starts a goroutine for every element whatever the element's fields (graph/lists.go says why
// and when marshalList does otherwise). Run it from the repository's root: go generate ./...
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

const (
	gqlgenList = "graphql.MarshalSliceConcurrently("
	ourList    = "marshalList("
)

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
	// The call keeps gqlgen's arguments (ctx, length, worker limit, panic handler, element), so
	// that a gqlgen whose call differs fails to build here rather than marshalling otherwise.
	if bytes.Count(src, []byte(gqlgenList)) == 0 {
		return fmt.Errorf("%s calls no %s: gqlgen marshals lists otherwise now; see graph/lists.go", cfg.Exec.Filename, gqlgenList)
	}
	return os.WriteFile(cfg.Exec.Filename, bytes.ReplaceAll(src, []byte(gqlgenList), []byte(ourList)), 0o644)
}
