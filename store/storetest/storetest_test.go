package storetest

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flightgraph/flightgraph/store"
)

// TestMakeTemplate: processes sharing a template folder fill each template once and never hand one
// out before it is whole; a maker that failed or died part way is no obstacle to the next.
func TestMakeTemplate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "template.db")
	if err := os.WriteFile(path+".partial", []byte("a maker that died part way"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A maker whose fill fails leaves no template.
	failed := errors.New("the fill failed")
	if made, err := makeTemplate(path, func(*store.DB) error { return failed }); made || !errors.Is(err, failed) {
		t.Fatalf("a failing fill: made %v, %v; want %v", made, err, failed)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a failed fill left a template (%v)", err)
	}

	// Makers at once: one fills it, each finds it whole.
	var fills atomic.Int32
	fill := func(*store.DB) error {
		fills.Add(1)
		raw, err := sql.Open("sqlite", path+".partial")
		if err != nil {
			return err
		}
		defer raw.Close() // before the maker's close, which checkpoints the write-ahead log
		_, err = raw.Exec(`INSERT INTO countries VALUES ('XX', 'Filled', '', '', '', 'EU', 'EUR', 1, 1, 1)`)
		return err
	}
	const makers = 4
	errs := make([]error, makers)
	var made atomic.Int32
	var wg sync.WaitGroup
	for i := range makers {
		wg.Go(func() {
			m, err := makeTemplate(path, fill)
			if m {
				made.Add(1)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("maker %d: %v", i, err)
		}
	}
	if n, m := fills.Load(), made.Load(); n != 1 || m != 1 {
		t.Fatalf("%d makers filled the template and %d say they made it, want 1 and 1", n, m)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Errorf("a partial file is left beside the template (%v)", err)
	}

	// A test's copy of it holds what the fill wrote.
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := copyFile(cp, path); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, store.SQLite, "sqlite:"+cp)
	var name string
	if err := SQL(t, db).QueryRow(`SELECT name FROM countries WHERE code = 'XX'`).Scan(&name); err != nil || name != "Filled" {
		t.Fatalf("the copy's country XX: %q %v", name, err)
	}
}
