// Command seedtemplates makes the tests' seeded SQLite templates ahead of a test run, in the folder
// that FLIGHTGRAPH_TEST_TEMPLATES names, for each window given as back:ahead (days before and after
// storetest.Now). .ci/run runs it without the race detector, where seeding a window takes seconds
// instead of the minute it takes in a race-enabled test binary; the tests then copy the templates.
//
//	FLIGHTGRAPH_TEST_TEMPLATES=$(mktemp -d) go run ./store/storetest/seedtemplates 1:1 1:15
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph/store/storetest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "seedtemplates:", err)
		os.Exit(1)
	}
}

func run(windows []string) error {
	dir := os.Getenv(storetest.EnvTemplates)
	if dir == "" {
		return fmt.Errorf("%s is not set: it names the folder the test binaries share", storetest.EnvTemplates)
	}
	if len(windows) == 0 {
		return fmt.Errorf("no windows: give each as back:ahead, e.g. 1:1")
	}
	for _, w := range windows {
		b, a, ok := strings.Cut(w, ":")
		back, err1 := strconv.Atoi(b)
		ahead, err2 := strconv.Atoi(a)
		if !ok || err1 != nil || err2 != nil || back < 0 || ahead < 0 {
			return fmt.Errorf("window %q: want back:ahead, two whole numbers of days, e.g. 1:15", w)
		}
		start := time.Now()
		path, made, err := storetest.MakeTemplate(dir, back, ahead)
		if err != nil {
			return err
		}
		if !made {
			fmt.Printf("%s (%d days back, %d ahead) was there\n", path, back, ahead)
			continue
		}
		fmt.Printf("%s (%d days back, %d ahead) in %v\n", path, back, ahead, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
