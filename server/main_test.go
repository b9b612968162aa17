package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/flightgraph/flightgraph/rest"
)

// TestMain holds every REST answer the tests make to encoding/json's bytes: the REST edge
// renders with segmentio/encoding/json, which must write what encoding/json would, field for
// field and byte for byte, or legacy clients would see the change.
//
// A run of benchmarks alone (-run '^$', as the README's commands are) goes without the check,
// which would double the cost of the rendering they measure.
func TestMain(m *testing.M) {
	flag.Parse()
	if run := flag.Lookup("test.run"); run != nil && run.Value.String() == "^$" {
		os.Exit(m.Run())
	}
	var (
		mu        sync.Mutex
		checked   int
		different string
	)
	rest.CheckEncoding(func(v any, written []byte) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		err := enc.Encode(v)
		mu.Lock()
		defer mu.Unlock()
		checked++
		if different == "" && (err != nil || !bytes.Equal(want.Bytes(), written)) {
			different = fmt.Sprintf("a %T was written as\n%.2000s\nwhere encoding/json writes (%v)\n%.2000s", v, written, err, want.Bytes())
		}
	})
	code := m.Run()
	if different != "" {
		fmt.Fprintf(os.Stderr, "FAIL: of %d REST answers, %s\n", checked, different)
		code = 1
	}
	os.Exit(code)
}
