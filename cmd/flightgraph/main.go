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
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise it is read from the
// build's VCS information (versionInfo).
var version = ""

func main() { os.Exit(mainWith(os.Args[1:])) }

// mainWith is main for args: it runs until SIGINT or SIGTERM and returns the exit code.
func mainWith(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful stop; a second one, with the default handling back,
	// ends the process at once.
	context.AfterFunc(ctx, stop)
	return exitCode(run(ctx, args, os.Getenv, os.Stdin, os.Stdout, os.Stderr), os.Stderr)
}

// exitCode is the process's exit code for run's error, which it reports: 0 for none, and for a
// request for help (-h), which the flag package printed already.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintln(stderr, "flightgraph:", err)
		return 1
	}
}

// versionInfo is the version to report: the one set at build time, else the VCS revision the
// binary was built from (with "+dirty" for uncommitted changes) and its commit time, else "dev".
func versionInfo() (string, time.Time) {
	var at time.Time
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return cmp.Or(version, "dev"), at
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if version != "" {
		return version, at
	}
	if rev == "" {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v, at
		}
		return "dev", at
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev, at
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
		v, at := versionInfo()
		if at.IsZero() {
			fmt.Fprintln(stdout, "flightgraph", v)
		} else {
			fmt.Fprintln(stdout, "flightgraph", v, "built from a commit of", at.UTC().Format(time.RFC3339))
		}
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
