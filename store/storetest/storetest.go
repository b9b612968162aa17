// Package storetest opens stores for tests: a fresh SQLite file always, and a fresh PostgreSQL
// schema when FLIGHTGRAPH_TEST_DATABASE_URL is set. A set URL that does not answer fails the
// test. An unset URL skips the tests that need it, with a message, outside CI; in CI (CI=true)
// it fails them, so that CI never passes without PostgreSQL or Redis.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/travel"
)

// EnvDatabaseURL names the variable that points the tests at a PostgreSQL server.
const EnvDatabaseURL = "FLIGHTGRAPH_TEST_DATABASE_URL"

// EnvRedisURL names the variable that points the tests at a Redis server.
const EnvRedisURL = "FLIGHTGRAPH_TEST_REDIS_URL"

// EnvTemplates names the variable that gives a folder where the test binaries of one run share the
// seeded SQLite templates (SeededWindow): each window is made there once, by the first binary that
// needs it or ahead of the tests by seedtemplates, which .ci/run runs without the race detector,
// under which seeding the pure-Go SQLite takes a minute a window. The folder must be new for the run
// (a template is never remade), so only the run's script sets it; unset, each binary makes its own.
const EnvTemplates = "FLIGHTGRAPH_TEST_TEMPLATES"

// EnvChromium names the variable that gives the browser tests Chromium's path.
const EnvChromium = "FLIGHTGRAPH_TEST_CHROMIUM"

// DatabaseURL returns the test PostgreSQL server's URL; see required.
func DatabaseURL(tb testing.TB) string {
	tb.Helper()
	return required(tb, EnvDatabaseURL, "PostgreSQL")
}

// Chromium returns the path of the Chromium the browser tests drive; see required.
func Chromium(tb testing.TB) string {
	tb.Helper()
	return required(tb, EnvChromium, "Chromium")
}

// RedisURL returns the test Redis server's URL; see required.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	return required(tb, EnvRedisURL, "Redis")
}

// required returns the variable env, and when it is unset skips the test with a message, or
// fails it in CI (CI=true), where every service is there and a skip would hide a test that never
// ran.
func required(tb testing.TB, env, what string) string {
	tb.Helper()
	if v := os.Getenv(env); v != "" {
		return v
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is not set: CI runs every test on %s", env, what)
	}
	tb.Skipf("%s is not set: this test needs %s (CI runs it)", env, what)
	return ""
}

// RedisClient returns a client of its own of the test Redis server and a fresh key prefix, whose
// keys are deleted when the test ends; without the server's URL it skips or fails as RedisURL
// does, and a set URL that does not answer fails the test.
func RedisClient(t testing.TB) (*redis.Client, string) {
	t.Helper()
	raw := RedisURL(t)
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("%s: %v", EnvRedisURL, err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis at %s does not answer: %v", EnvRedisURL, err)
	}
	return c, RedisPrefix(t, c)
}

// RedisPrefix returns a fresh key prefix and deletes its keys from c when the test ends.
func RedisPrefix(t testing.TB, c *redis.Client) string {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	prefix := "flightgraph-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("deleting the test keys: %v", err)
		}
	})
	return prefix
}

// Now is the clock of seeded test stores: a fixed morning, so statuses are repeatable.
var Now = time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)

// ForEachDialect runs fn as a subtest (or sub-benchmark) on SQLite and on PostgreSQL; the
// PostgreSQL one skips with a message, or fails in CI, when FLIGHTGRAPH_TEST_DATABASE_URL is
// unset (DatabaseURL).
func ForEachDialect[T runner[T]](t T, fn func(t T, dialect string)) {
	for _, d := range []string{store.SQLite, store.Postgres} {
		t.Run(d, func(t T) {
			if d == store.Postgres {
				DatabaseURL(t)
			}
			fn(t, d)
		})
	}
}

// runner is *testing.T or *testing.B.
type runner[T any] interface {
	testing.TB
	Run(name string, f func(T)) bool
}

// ClearOfMidnight sleeps past the next UTC midnight when now, the clock days are counted on, is
// less than a minute before it: a test of daily counts must not run across a day's end.
func ClearOfMidnight(t testing.TB, now time.Time) {
	if left := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now); left < time.Minute {
		t.Logf("waiting %v for UTC midnight to pass", left.Round(time.Second))
		time.Sleep(left + time.Second)
	}
}

// DSN returns a URL of an empty database of the dialect that lives as long as the test.
func DSN(t testing.TB, dialect string, getenv func(string) string) string {
	t.Helper()
	if dialect == store.SQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	}
	base := getenv(EnvDatabaseURL)
	if base == "" {
		t.Fatalf("%s is not set", EnvDatabaseURL)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvDatabaseURL, err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("PostgreSQL at %s does not answer: %v", EnvDatabaseURL, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvDatabaseURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema) // lib/pq passes unknown keys on as run-time parameters
	u.RawQuery = q.Encode()
	return u.String()
}

// handles are the database/sql handles SQL gives out, one per store of Open, made on first use.
var handles sync.Map // *store.DB → *handle

type handle struct {
	once sync.Once
	dsn  string
	db   *sql.DB
	err  error
}

// SQL returns a database/sql handle of its own on the database of a store that Open made, for a
// test to read or write what no store method does. It is one handle per store, closed with it.
func SQL(t testing.TB, db *store.DB) *sql.DB {
	t.Helper()
	v, ok := handles.Load(db)
	if !ok {
		t.Fatal("storetest.SQL: the store was not opened by storetest.Open nor adopted, or is closed")
	}
	h := v.(*handle)
	h.once.Do(func() {
		driver, dsn := "postgres", h.dsn
		if db.Dialect() == store.SQLite {
			driver, dsn = "sqlite", strings.TrimPrefix(dsn, "sqlite:")+"?_pragma=busy_timeout(10000)"
		}
		h.db, h.err = sql.Open(driver, dsn)
	})
	if h.err != nil {
		t.Fatal(h.err)
	}
	return h.db
}

// Adopt lets SQL serve a store a test opened itself, at dsn, until the test ends.
func Adopt(t testing.TB, db *store.DB, dsn string) {
	h := &handle{dsn: dsn}
	handles.Store(db, h)
	t.Cleanup(func() {
		handles.Delete(db)
		if h.db != nil {
			h.db.Close()
		}
	})
}

// Open returns a migrated, empty store of the dialect, closed when the test ends.
func Open(t testing.TB, dialect string, getenv func(string) string) *store.DB {
	t.Helper()
	return openAt(t, dialect, DSN(t, dialect, getenv))
}

// openAt opens and migrates the store at dsn, closed when the test ends.
func openAt(t testing.TB, dialect, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open %s store: %v", dialect, err)
	}
	Adopt(t, db, dsn)
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s store: %v", dialect, err)
	}
	return db
}

// Seeded returns a store holding the demo data set with flights of the three days around Now.
func Seeded(t testing.TB, dialect string, getenv func(string) string) *store.DB {
	t.Helper()
	return SeededWindow(t, dialect, getenv, 1, 1)
}

// SeededWindow is Seeded with flights from back days before Now to ahead days after it. On SQLite
// the data set is generated and loaded once per window, into a template file that each test gets a
// copy of (loading it is most of a test's time otherwise): once per test binary, or once per run
// where EnvTemplates names a folder the run's binaries share.
func SeededWindow(t testing.TB, dialect string, getenv func(string) string, back, ahead int) *store.DB {
	t.Helper()
	if dialect == store.SQLite {
		path := filepath.Join(t.TempDir(), "test.db")
		if err := copyFile(path, sqliteTemplate(t, getenv, back, ahead)); err != nil {
			t.Fatalf("copy the seeded template: %v", err)
		}
		return openAt(t, dialect, "sqlite:"+path)
	}
	db := Open(t, dialect, getenv)
	if err := seed(db, back, ahead); err != nil {
		t.Fatalf("seed %s store: %v", dialect, err)
	}
	return db
}

// seed loads the demo data set with flights of the window around Now.
func seed(db *store.DB, back, ahead int) error {
	opts := dataset.Options{Seed: dataset.DefaultSeed, Scale: 1, DaysBack: back, DaysAhead: ahead}
	_, err := dataset.Seed(context.Background(), store.NewDatasetStore(db), opts, Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return err
}

// templates are the seeded SQLite files of this test binary, by window.
var templates sync.Map // [2]int → *template

type template struct {
	once sync.Once
	path string
	err  error
}

// unlistedWindow is the error of a window that a test binary of a CI run had to make in the run's
// shared folder: .ci/run makes the windows the tests use ahead (seedtemplates), without the race
// detector, and one missing there costs each such run a minute of seeding under it.
func unlistedWindow(back, ahead int) error {
	return fmt.Errorf("window %d:%d is not made ahead by .ci/run: add it to the seedtemplates line there", back, ahead)
}

// sqliteTemplate returns the path of a seeded SQLite database of the window, made on first use in
// this binary in the run's shared folder (EnvTemplates) or else the binary's own (templateDir).
func sqliteTemplate(t testing.TB, getenv func(string) string, back, ahead int) string {
	t.Helper()
	v, _ := templates.LoadOrStore([2]int{back, ahead}, &template{})
	tpl := v.(*template)
	tpl.once.Do(func() {
		dir := getenv(EnvTemplates)
		shared := dir != ""
		if !shared {
			dir = templateDir()
		}
		var made bool
		tpl.path, made, tpl.err = MakeTemplate(dir, back, ahead)
		if tpl.err == nil && made && shared && getenv("CI") == "true" {
			tpl.err = unlistedWindow(back, ahead)
		}
	})
	if tpl.err != nil {
		t.Fatalf("seed the SQLite template: %v", tpl.err)
	}
	return tpl.path
}

// MakeTemplate returns the path of dir's seeded SQLite database of the window, making it if dir has
// none (makeTemplate); made reports that this call made it.
func MakeTemplate(dir string, back, ahead int) (path string, made bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	path = filepath.Join(dir, fmt.Sprintf("seeded-%d-%d.db", back, ahead))
	made, err = makeTemplate(path, func(db *store.DB) error { return seed(db, back, ahead) })
	return path, made, err
}

// makeTemplate makes a migrated SQLite database at path and fills it, unless path is there; made
// reports that it did. Processes sharing the folder make each template once: the maker holds an
// exclusive lock on a file beside it, and the template appears whole, by renaming, only once it is
// filled.
func makeTemplate(path string, fill func(*store.DB) error) (made bool, err error) {
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return false, err
	}
	defer lock.Close() // closing it releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return false, fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	partial := path + ".partial"
	for _, f := range []string{partial, partial + "-wal", partial + "-shm"} {
		os.Remove(f) // a maker that died part way left these
	}
	db, err := store.Open(context.Background(), "sqlite:"+partial)
	if err != nil {
		return false, err
	}
	err = db.Migrate(context.Background())
	if err == nil {
		err = fill(db)
	}
	// Closing the last connection checkpoints the write-ahead log into the file.
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(partial, path)
	}
	if err != nil {
		return false, fmt.Errorf("make %s: %w", path, err)
	}
	return true, nil
}

// templateDir is this test binary's folder of templates, in the temporary directory and named by
// its process id; the folders of binaries that are gone are removed as it is made.
func templateDir() string {
	prefix := filepath.Join(os.TempDir(), "flightgraph-seeded-")
	if old, err := filepath.Glob(prefix + "*"); err == nil {
		for _, dir := range old {
			pid, err := strconv.Atoi(strings.TrimPrefix(dir, prefix))
			if err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
				os.RemoveAll(dir)
			}
		}
	}
	return prefix + strconv.Itoa(os.Getpid())
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Place resolves an airport or city code of db's data set as the product does (travel.Place),
// failing the test if it is neither.
func Place(t testing.TB, db *store.DB, code string) *flightgraph.Place {
	t.Helper()
	p, err := (&travel.Service{Places: store.NewPlaceStore(db)}).Place(context.Background(), "code", code)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
