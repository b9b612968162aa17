// Command flightgraph is the developer platform for flight data: one binary that serves GraphQL
// (and, later, REST and the portal) on an embedded SQLite store or on PostgreSQL.
//
//	flightgraph [serve]    run the server (the default)
//	flightgraph migrate    apply database migrations
//	flightgraph seed       (re)load the demo data set
//	flightgraph operator   add an operator account
//	flightgraph version    print the version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() { os.Exit(mainWith(os.Args[1:])) }

// mainWith is main for args: it runs until SIGINT or SIGTERM and returns the exit code.
func mainWith(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful stop; a second one, with the default handling back,
	// ends the process at once.
	context.AfterFunc(ctx, stop)
	if err := run(ctx, args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "flightgraph:", err)
		return 1
	}
	return 0
}

// run is the whole program; tests call it with their own arguments, environment and outputs.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, getenv, stdout, stderr)
	case "seed":
		return seed(ctx, args, getenv, stdout, stderr)
	case "operator":
		return operatorCmd(ctx, args, getenv, stdin, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "flightgraph", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

const usage = `usage: flightgraph [command] [flags]

commands:
  serve     run the server (default)
  migrate   apply database migrations
  seed      (re)load the demo data set; --scale N multiplies the network
  operator  add --email E --name N: add an operator account (password on stdin)
  version   print the version

Run 'flightgraph <command> -h' for the flags of a command. Every flag can also be set with the
FLIGHTGRAPH_* environment variable named in its help.
`
