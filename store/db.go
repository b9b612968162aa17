// Package store implements the domain's store interfaces with sqlx on two dialects: an embedded
// SQLite file (modernc.org/sqlite, no cgo) and PostgreSQL (lib/pq). SQL is written once in the
// portable subset; what truly differs between the dialects lives in this file.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/flightgraph/flightgraph"
)

// Dialects.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

//go:embed migrations
var migrations embed.FS

// DB is an open store. It is safe for concurrent use.
type DB struct {
	db      *sqlx.DB
	dialect string
	dsn     string // for connections of its own, as the AccessFeed's listener
	// OnQuery, when set, is called once per SQL round trip (for metrics).
	OnQuery func()
	// OnStatement, when set, is called as each SQL statement of a request starts, with its text
	// (placeholders, never the values), and returns what to call with the statement's error once
	// it has run: the statement's span (package tracing). Set it before the store is used.
	OnStatement func(ctx context.Context, query string) func(error)
	// Now is the store's clock, injectable in tests.
	Now func() time.Time

	// stmts caches prepared statements by query text: parsing and planning cost SQLite more than
	// running a small indexed query. nstmts bounds the cache, since IN lists make one text per
	// length.
	stmts  sync.Map
	nstmts atomic.Int32

	// mailMu guards mailQueued, the functions told after each commit of a transaction that
	// queued mail (MailStore.OnQueued).
	mailMu     sync.Mutex
	mailQueued []func()
}

// maxStatements bounds the statement cache.
const maxStatements = 2000

// Open opens the store at dsn: a postgres:// or postgresql:// URL selects PostgreSQL; a sqlite:
// URL or a plain file path selects the embedded SQLite store, created if missing, with WAL and
// foreign keys on. Open checks that the database answers.
func Open(ctx context.Context, dsn string) (*DB, error) {
	var (
		db      *sqlx.DB
		dialect string
		err     error
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		dialect = Postgres
		db, err = sqlx.Open("postgres", dsn)
		if err == nil {
			db.SetMaxOpenConns(20)
			db.SetMaxIdleConns(20)
			db.SetConnMaxIdleTime(5 * time.Minute)
		}
	default:
		dialect = SQLite
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite://"), "sqlite:")
		if path == "" {
			return nil, fmt.Errorf("store: empty database path")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("store: %w", err)
			}
		}
		q := url.Values{}
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "busy_timeout(10000)")
		q.Set("_time_format", "sqlite")
		q.Set("_txlock", "immediate")
		db, err = sqlx.Open("sqlite", "file:"+path+"?"+q.Encode())
		if err == nil {
			// Readers run in parallel under WAL; writers queue on the busy timeout.
			db.SetMaxOpenConns(8)
			db.SetMaxIdleConns(8)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	s := &DB{db: db, dialect: dialect, dsn: dsn, Now: time.Now}
	if err := s.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Dialect returns SQLite or Postgres.
func (s *DB) Dialect() string { return s.dialect }

// SetMaxConns sets the most connections the store holds open and idle (PostgreSQL: 20 unless
// set; the LISTEN feeds' connections are their own).
func (s *DB) SetMaxConns(n int) {
	s.db.SetMaxOpenConns(n)
	s.db.SetMaxIdleConns(n)
}

// Close closes the store and its cached statements.
func (s *DB) Close() error {
	s.stmts.Range(func(k, v any) bool {
		v.(*sqlx.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
	return s.db.Close()
}

// prepared returns the cached statement for query, preparing it on first use; nil when the cache
// is full, and the caller then runs the query unprepared.
func (s *DB) prepared(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sqlx.Stmt), nil
	}
	if s.nstmts.Load() >= maxStatements {
		return nil, nil
	}
	st, err := s.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sqlx.Stmt), nil
	}
	s.nstmts.Add(1)
	return st, nil
}

// Ping checks that the database answers; it returns ECodeDatabase when it does not.
func (s *DB) Ping(ctx context.Context) error {
	s.counted(ctx)
	return translate(s.db.PingContext(ctx))
}

// Migrate applies the embedded migrations of the store's dialect that have not been applied yet,
// each in its own transaction. On PostgreSQL an advisory lock keeps replicas that start together
// from migrating twice.
func (s *DB) Migrate(ctx context.Context) error {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return translate(err)
	}
	defer conn.Close()
	if s.dialect == Postgres {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7420266)`); err != nil {
			return translate(err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(7420266)`)
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return translate(err)
	}
	var applied []int
	if err := conn.SelectContext(ctx, &applied, `SELECT version FROM schema_migrations`); err != nil {
		return translate(err)
	}
	done := map[int]bool{}
	for _, v := range applied {
		done[v] = true
	}
	files, err := fs.Glob(migrations, "migrations/"+s.dialect+"/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		name := filepath.Base(f)
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: name must start with a number", name)
		}
		if done[v] {
			continue
		}
		body, err := migrations.ReadFile(f)
		if err != nil {
			return err
		}
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return translate(err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
			v, name, s.Now().UTC().Format(time.RFC3339)); err != nil {
			tx.Rollback()
			return translate(err)
		}
		if err := tx.Commit(); err != nil {
			return translate(err)
		}
	}
	return nil
}

// LatestVersion returns the highest migration this build carries for a dialect.
func LatestVersion(dialect string) int {
	files, _ := fs.Glob(migrations, "migrations/"+dialect+"/*.sql")
	latest := 0
	for _, f := range files {
		if v, err := strconv.Atoi(strings.SplitN(filepath.Base(f), "_", 2)[0]); err == nil && v > latest {
			latest = v
		}
	}
	return latest
}

// SchemaVersion returns the highest applied migration, 0 for an empty database.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.db.GetContext(ctx, &v, `SELECT MAX(version) FROM schema_migrations`)
	if err != nil {
		if isMissingTable(err) {
			return 0, nil
		}
		return 0, translate(err)
	}
	return int(v.Int64), nil
}

// queryCounter counts SQL round trips of one request.
type queryCounter struct{ n atomic.Int64 }

type counterKey struct{}

// WithQueryCounter returns a context that counts the SQL round trips made with it; read the count
// with QueryCount.
func WithQueryCounter(ctx context.Context) context.Context {
	return context.WithValue(ctx, counterKey{}, &queryCounter{})
}

// QueryCount returns the SQL round trips made with ctx since WithQueryCounter, or 0.
func QueryCount(ctx context.Context) int64 {
	if c, ok := ctx.Value(counterKey{}).(*queryCounter); ok {
		return c.n.Load()
	}
	return 0
}

func (s *DB) counted(ctx context.Context) {
	if c, ok := ctx.Value(counterKey{}).(*queryCounter); ok {
		c.n.Add(1)
	}
	if s.OnQuery != nil {
		s.OnQuery()
	}
}

// statement counts a round trip of query and starts its span (OnStatement); the caller calls what
// it returns with the statement's error.
func (s *DB) statement(ctx context.Context, query string) func(error) {
	s.counted(ctx)
	if s.OnStatement == nil {
		return ended
	}
	return s.OnStatement(ctx, query)
}

// ended is the end of a statement that no span watches.
func ended(error) {}

// queryer is what *sqlx.DB and *sqlx.Tx share.
type queryer interface {
	sqlx.ExtContext
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

// selectIn runs a query with '?' placeholders, expanding slice arguments for IN (?), in one
// counted round trip; an empty slice argument selects nothing and costs none.
func (s *DB) selectIn(ctx context.Context, q queryer, dest any, query string, args ...any) error {
	for _, a := range args {
		if v := reflect.ValueOf(a); v.Kind() == reflect.Slice && v.Len() == 0 && v.Type().Elem().Kind() != reflect.Uint8 {
			return nil // IN of no keys matches no row, without a round trip (sqlx.In refuses it)
		}
	}
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return err
	}
	query = s.db.Rebind(query)
	end := s.statement(ctx, query)
	err = translate(s.selectOn(ctx, q, dest, query, args))
	end(err)
	return err
}

// selectOn runs a rebound query on q, prepared when q is the database.
func (s *DB) selectOn(ctx context.Context, q queryer, dest any, query string, args []any) error {
	if q == queryer(s.db) {
		st, err := s.prepared(ctx, query)
		if err != nil {
			return err
		}
		if st != nil {
			return st.SelectContext(ctx, dest, args...)
		}
	}
	return q.SelectContext(ctx, dest, query, args...)
}

// get runs a query that returns one row, in one counted round trip; no row is sql.ErrNoRows.
func (s *DB) get(ctx context.Context, q queryer, dest any, query string, args ...any) error {
	query = s.db.Rebind(query)
	end := s.statement(ctx, query)
	err := translate(q.GetContext(ctx, dest, query, args...))
	end(err)
	return err
}

// exec runs a statement in one counted round trip.
func (s *DB) exec(ctx context.Context, q queryer, query string, args ...any) (sql.Result, error) {
	query = s.db.Rebind(query)
	end := s.statement(ctx, query)
	r, err := q.ExecContext(ctx, query, args...)
	err = translate(err)
	end(err)
	return r, err
}

// inMailTx is inTx for a transaction that may queue mail: fn marks *queued when it does, and
// once the transaction has committed, the outboxes listening (MailStore.OnQueued) are told, so
// that a message goes out at once rather than on the outbox's next tick.
func (s *DB) inMailTx(ctx context.Context, fn func(tx *sqlx.Tx, queued *bool) error) error {
	var queued bool
	err := s.inTx(ctx, func(tx *sqlx.Tx) error { return fn(tx, &queued) })
	if err == nil && queued {
		s.mailMu.Lock()
		tell := s.mailQueued
		s.mailMu.Unlock()
		for _, f := range tell {
			f()
		}
	}
	return err
}

// inTx runs fn in a transaction, committing when it returns nil and rolling back otherwise.
func (s *DB) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	end := s.statement(ctx, "BEGIN")
	tx, err := s.db.BeginTxx(ctx, nil)
	err = translate(err)
	end(err)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	end = s.statement(ctx, "COMMIT")
	err = translate(tx.Commit())
	end(err)
	return err
}

// insertRows inserts rows into table with multi-row INSERT statements, as many rows per statement
// as the dialect's parameter limit allows.
func (s *DB) insertRows(ctx context.Context, tx *sqlx.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	per := 30000 / len(cols) // under SQLite's 32766 and PostgreSQL's 65535 parameters
	if per > 1000 {
		per = 1000
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES "
	var (
		stmt      *sqlx.Stmt
		fullQuery string // stmt's text: a statement of per rows
	)
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	args := make([]any, 0, per*len(cols))
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		args = args[:0]
		for _, r := range rows[start:end] {
			if len(r) != len(cols) {
				return fmt.Errorf("store: %s: row has %d values for %d columns", table, len(r), len(cols))
			}
			args = append(args, r...)
		}
		n := end - start
		query := fullQuery
		if n < per || stmt == nil {
			query = s.db.Rebind(head + strings.TrimSuffix(strings.Repeat(one+",", n), ","))
		}
		if n == per && stmt == nil {
			var err error
			if stmt, err = tx.PreparexContext(ctx, query); err != nil {
				return translate(err)
			}
			fullQuery = query
		}
		done := s.statement(ctx, query)
		var err error
		if n == per {
			_, err = stmt.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, query, args...)
		}
		err = translate(err)
		done(err)
		if err != nil {
			return fmt.Errorf("store: insert into %s: %w", table, err)
		}
	}
	return nil
}

// translate turns driver errors into domain errors once, here: an unreachable database becomes
// ECodeDatabase; sql.ErrNoRows and other errors pass through wrapped as they are.
func translate(err error) error {
	if err == nil || errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var fe *flightgraph.Error
	if errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		// The caller's context was cancelled: its client left, or it is shutting down.
		return &flightgraph.Error{Code: flightgraph.ECodeTimeout, Message: "The request was cancelled.", Err: err}
	}
	if isUnavailable(err) {
		return &flightgraph.Error{Code: flightgraph.ECodeDatabase, Message: "The database is not available.", Err: err}
	}
	if isUniqueViolation(err) {
		return fmt.Errorf("%w: %w", flightgraph.ErrExists, err)
	}
	if isBadValue(err) {
		return &flightgraph.Error{Code: flightgraph.ECodeBadFormat, Message: "An input parameter has an invalid format.", Err: err}
	}
	return err
}

// isBadValue reports whether err is PostgreSQL's refusal of a value (class 22, data exception:
// a NUL or invalid UTF-8 in text, a number out of range …): the caller's input, not a fault.
// SQLite stores such values as they are.
func isBadValue(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && strings.HasPrefix(string(pe.Code), "22")
}

// isUniqueViolation reports whether err is a unique or primary key violation.
func isUniqueViolation(err error) bool {
	var (
		pe *pq.Error
		se *sqlite.Error
	)
	switch {
	case errors.As(err, &pe):
		return pe.Code == "23505"
	case errors.As(err, &se):
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// isUnavailable reports whether err means the database could not be reached or is shutting down,
// rather than a fault in one statement.
func isUnavailable(err error) bool {
	var (
		ne  net.Error
		pe  *pq.Error
		se  *sqlite.Error
		ope *net.OpError
	)
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// lib/pq's answer when the server, or anything between, closed the connection.
		return true
	case errors.As(err, &ope), errors.As(err, &ne):
		return true
	case errors.As(err, &pe):
		// Class 08 is connection exceptions, 57P0x an administrator's shutdown or a crash, 53 lack
		// of resources.
		c := string(pe.Code)
		return strings.HasPrefix(c, "08") || strings.HasPrefix(c, "57P") || strings.HasPrefix(c, "53")
	case errors.As(err, &se):
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL:
			return true
		}
	}
	return strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "database is closed")
}

func isMissingTable(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return pe.Code == "42P01"
	}
	return strings.Contains(err.Error(), "no such table")
}

// byKey orders rows for a batch lookup: it returns one entry per key, in the order of keys, nil
// where no row has that key. Dataloaders rely on that order.
func byKey[K comparable, T any](keys []K, rows []*T, key func(*T) K) []*T {
	m := make(map[K]*T, len(rows))
	for _, r := range rows {
		m[key(r)] = r
	}
	out := make([]*T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// groupByKey groups rows for a batch lookup of lists: one slice per key, in the order of keys,
// keeping the rows' order inside each group.
func groupByKey[K comparable, T any](keys []K, rows []*T, key func(*T) K) [][]*T {
	m := make(map[K][]*T, len(keys))
	for _, r := range rows {
		k := key(r)
		m[k] = append(m[k], r)
	}
	out := make([][]*T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// unique returns keys without duplicates, keeping the first occurrence's order.
func unique[K comparable](keys []K) []K {
	seen := make(map[K]bool, len(keys))
	out := make([]K, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// likeEscape follows each LIKE whose pattern comes from containsPattern. PostgreSQL escapes with
// a backslash by default but SQLite has no escape character at all unless one is named, so the
// clause is spelled out for both.
const likeEscape = ` ESCAPE '\'`

// containsPattern returns the LIKE pattern (with likeEscape) matching values that contain s
// literally: the wildcards % and _ and the escape character itself in s are escaped, so that a
// search for "%" finds names with a percent sign, not every name.
func containsPattern(s string) string {
	return "%" + likeEscaper.Replace(s) + "%"
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// filter builds the WHERE clause of a search from conditions with '?' arguments.
type filter struct {
	conds []string
	args  []any
}

func (f *filter) add(cond string, args ...any) {
	f.conds = append(f.conds, cond)
	f.args = append(f.args, args...)
}

// places matches the origin and destination columns to the airports of the places given: a
// list walks the index in order, where a subquery for a city's airports cost PostgreSQL reading
// and sorting every flight of the day.
func (f *filter) places(origin, destination *flightgraph.Place) {
	if origin != nil {
		f.add("origin IN (?)", origin.AirportCodes())
	}
	if destination != nil {
		f.add("destination IN (?)", destination.AirportCodes())
	}
}

func (f *filter) where() string {
	if len(f.conds) == 0 {
		return "1 = 1"
	}
	return strings.Join(f.conds, " AND ")
}

// findPage selects one page of table's rows matching f and returns them with the number of all
// matches (0 when the page is Uncounted). R is a row type with the columns and a Total field
// tagged db:"total"; split returns a row's record and total. The total comes in the same round
// trip from an uncorrelated scalar subquery, which both dialects evaluate once; only a page past
// the end needs a count of its own.
func findPage[R, T any](ctx context.Context, s *DB, split func(*R) (*T, int), cols, table string, f filter, order string, p flightgraph.Page) ([]*T, int, error) {
	cond := f.where()
	q := `SELECT ` + cols + `, (SELECT COUNT(*) FROM ` + table + ` WHERE ` + cond + `) AS total FROM ` + table +
		` WHERE ` + cond + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
	args := append(append(append([]any{}, f.args...), f.args...), p.Limit, p.Offset)
	if p.Uncounted {
		q = `SELECT ` + cols + ` FROM ` + table + ` WHERE ` + cond + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
		args = append(append([]any{}, f.args...), p.Limit, p.Offset)
	}
	var rows []R
	if err := s.selectIn(ctx, s.db, &rows, q, args...); err != nil {
		return nil, 0, err
	}
	out, total := make([]*T, len(rows)), 0
	for i := range rows {
		out[i], total = split(&rows[i])
	}
	if len(rows) == 0 && p.Offset > 0 && !p.Uncounted {
		var n []int
		if err := s.selectIn(ctx, s.db, &n, `SELECT COUNT(*) FROM `+table+` WHERE `+cond, f.args...); err != nil {
			return nil, 0, err
		}
		total = n[0]
	}
	return out, total, nil
}
