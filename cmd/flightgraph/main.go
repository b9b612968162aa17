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
// build information (versionInfo).
var version = ""

func main() { os.Exit(mainWith(os.Args[1:])) }

// errInteractiveStop is the cause of the context's end when a person pressed Ctrl-C at a
// terminal: serve then stops at once unless requests are in flight (server.Shutdown.Interactive).
var errInteractiveStop = errors.New("interrupted at a terminal")

// mainWith is main for args: it runs until SIGINT or SIGTERM and returns the exit code.
func mainWith(args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig, ok := <-signals
		// The first signal starts a graceful stop; a second one, with the default handling
		// back, ends the process at once.
		signal.Stop(signals)
		if !ok {
			return
		}
		cause := fmt.Errorf("received %v", sig)
		if sig == os.Interrupt && isTerminal(os.Stdin) {
			// Ctrl-C at a terminal: a supervisor sends SIGTERM, and its stdin is no terminal.
			cause = errInteractiveStop
		}
		cancel(cause)
	}()
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

// versionInfo is the version to report and the time of the commit it was built from (zero when
// unknown): see versionOf.
func versionInfo() (string, time.Time) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionOf(info, version)
}

// versionOf is the version of a binary with build information info (nil when it has none) and
// the version set at build time, if any. It is, first found: the version set at build time; the
// VCS revision the binary was built from (12 digits, "+dirty" for uncommitted changes); the
// module's version, which `go install …@v1.2.3` records with no VCS stamp; else "(devel)", as
// the go command calls a build of a module's own source without one.
func versionOf(info *debug.BuildInfo, stamped string) (string, time.Time) {
	var at time.Time
	if info == nil {
		return cmp.Or(stamped, "(devel)"), at
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
	switch {
	case stamped != "":
		return stamped, at
	case rev != "":
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		return rev, at
	}
	return cmp.Or(info.Main.Version, "(devel)"), at
}

// printVersion writes the version line of `flightgraph version` and `flightgraph --version`.
func printVersion(w io.Writer) {
	v, at := versionInfo()
	if at.IsZero() {
		fmt.Fprintln(w, "flightgraph", v)
	} else {
		fmt.Fprintln(w, "flightgraph", v, "built from a commit of", at.UTC().Format(time.RFC3339))
	}
}

// run is the whole program; tests call it with their own arguments, environment and outputs.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			return printHelp(stdout)
		case "-version", "--version", "version":
			printVersion(stdout)
			return nil
		}
		if len(args[0]) > 0 && args[0][0] != '-' {
			cmd, args = args[0], args[1:]
		}
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
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// printHelp writes the commands and the flags of serve, the default command.
func printHelp(w io.Writer) error {
	fmt.Fprint(w, usage)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serveFlags(fs)
	fmt.Fprintln(w, "\nflags of serve (flightgraph [serve] [flags]):")
	fs.SetOutput(w)
	fs.PrintDefaults()
	return nil
}

const usage = `usage: flightgraph [command] [flags]

commands:
  serve     run the server (the default when no command is given)
  migrate   apply database migrations
  seed      (re)load the demo data set; --scale N multiplies the network
  operator  add --email E --name N: add an operator account (password on stdin)
  version   print the version (also --version)
  help      print this help (also -h, --help)

Run 'flightgraph <command> -h' for the flags of a command. Every flag can also be set with the
FLIGHTGRAPH_* environment variable named in its help.
`
