package store

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrationsDifferOnlyInTypes keeps the two dialects' migrations one schema: the PostgreSQL
// file must be the SQLite file with the types PostgreSQL spells differently, and nothing else.
func TestMigrationsDifferOnlyInTypes(t *testing.T) {
	toPostgres := strings.NewReplacer(
		"TIMESTAMP", "TIMESTAMPTZ",
		"INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
	)
	lite, _ := fs.Glob(migrations, "migrations/sqlite/*.sql")
	pg, _ := fs.Glob(migrations, "migrations/postgres/*.sql")
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("%d SQLite and %d PostgreSQL migrations", len(lite), len(pg))
	}
	for i := range lite {
		if filepath.Base(lite[i]) != filepath.Base(pg[i]) {
			t.Fatalf("migration %d is %s for SQLite, %s for PostgreSQL", i, filepath.Base(lite[i]), filepath.Base(pg[i]))
		}
		a, _ := migrations.ReadFile(lite[i])
		b, _ := migrations.ReadFile(pg[i])
		if toPostgres.Replace(string(a)) != string(b) {
			t.Errorf("%s: the PostgreSQL file differs from the SQLite one in more than types", filepath.Base(lite[i]))
		}
	}
}
