package storetest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestMakeTemplate: processes sharing a template folder make each window once and never hand out a
// template before it is whole; a maker that died part way is no obstacle.
func TestMakeTemplate(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "seeded-0-0.db.partial")
	if err := os.WriteFile(stale, []byte("a maker that died part way"), 0o644); err != nil {
		t.Fatal(err)
	}
	const makers = 3
	paths := make([]string, makers)
	errs := make([]error, makers)
	var wg sync.WaitGroup
	for i := range makers {
		wg.Go(func() { paths[i], errs[i] = MakeTemplate(dir, 0, 0) })
	}
	wg.Wait()
	for i := range makers {
		if errs[i] != nil {
			t.Fatalf("maker %d: %v", i, errs[i])
		}
		if paths[i] != paths[0] {
			t.Fatalf("makers disagree on the template: %s and %s", paths[0], paths[i])
		}
	}
	made, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead maker's partial file is still there (%v)", err)
	}

	// A second call finds the template and does not make it again.
	again, err := MakeTemplate(dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(again); err != nil || !st.ModTime().Equal(made.ModTime()) || again != paths[0] {
		t.Fatalf("the template was made again: %v %v", st, err)
	}

	// Each test gets a copy of it with the demo data set's flights.
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := copyFile(path, paths[0]); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, "sqlite", "sqlite:"+path)
	var flights int
	if err := SQL(t, db).QueryRow(`SELECT count(*) FROM flights`).Scan(&flights); err != nil {
		t.Fatal(err)
	}
	if flights == 0 {
		t.Fatal("the template holds no flights")
	}
	t.Logf("%d flights in the template", flights)
}
