package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/flightgraph/flightgraph"
)

// accessChannel is the SQL of the PostgreSQL notification channel of access changes: one per
// schema, since PostgreSQL's channels are the database's and a schema is a deployment (two that
// share a database, or tests that run side by side, must not hear each other's changes). Its
// payloads are "key:<key id>" and "family:<token family id>".
const accessChannel = `'flightgraph_access_' || left(md5(current_schema()), 16)`

// announce tells every listening process of an access change, inside the transaction of the
// change: PostgreSQL delivers a notification when, and only if, its transaction commits. On
// SQLite, which one process owns, it does nothing: the access service tells its own guard.
func (t *accessTx) announce(ctx context.Context, c flightgraph.AccessChange) error {
	if t.db.dialect != Postgres {
		return nil
	}
	payload := "key:" + c.KeyID
	if c.FamilyID != "" {
		payload = "family:" + c.FamilyID
	}
	_, err := t.db.exec(ctx, t.q, `SELECT pg_notify(`+accessChannel+`, ?)`, payload)
	return err
}

// announceApplication announces a change to every key of an application, before it is deleted.
func (t *accessTx) announceApplication(ctx context.Context, appID string) error {
	if t.db.dialect != Postgres {
		return nil
	}
	_, err := t.db.exec(ctx, t.q, `SELECT pg_notify(`+accessChannel+`, 'key:' || id) FROM api_keys WHERE application_id = ?`, appID)
	return err
}

// announceAccount announces a change to every key of an account's applications.
func (t *accessTx) announceAccount(ctx context.Context, accountID string) error {
	if t.db.dialect != Postgres {
		return nil
	}
	_, err := t.db.exec(ctx, t.q, `SELECT pg_notify(`+accessChannel+`, 'key:' || k.id) FROM api_keys k JOIN applications p ON p.id = k.application_id
		WHERE p.account_id = ?`, accountID)
	return err
}

// How the feed keeps its connection. A connection can die silently (a network partition sends
// no reset), and pq's Listener notices only when it next writes: so the feed pings it, and
// counts itself down when a ping fails or takes longer than feedPingTimeout.
const (
	feedReconnectMin = 100 * time.Millisecond
	feedReconnectMax = 10 * time.Second
	feedPingEvery    = 5 * time.Second
	feedPingTimeout  = 2 * time.Second
)

// AccessFeed implements flightgraph.AccessFeed with PostgreSQL's LISTEN/NOTIFY on a connection
// of its own (lib/pq's Listener), which pg_stat_activity shows as the store's application_name
// (default flightgraph) followed by "-access-feed".
//
// PostgreSQL rather than Redis pub/sub: the notification is part of the transaction of the
// change, so a change rolled back announces nothing and a committed one reaches every listener
// that is connected, with no window between the commit and a publish that a crash could fall
// into; and a deployment on PostgreSQL has it without Redis. What a listener misses while it is
// disconnected is never replayed: the watcher is told the feed is down then, and up again once
// it listens, so that it drops what it cached meanwhile.
type AccessFeed struct {
	db  *DB
	log *slog.Logger
	// PingEvery and PingTimeout are how often the connection is checked and how long a check
	// may take; 0 means feedPingEvery and feedPingTimeout.
	PingEvery, PingTimeout time.Duration
}

var _ flightgraph.AccessFeed = (*AccessFeed)(nil)

// NewAccessFeed returns the access feed of db, logging to log.
func NewAccessFeed(db *DB, log *slog.Logger) *AccessFeed {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &AccessFeed{db: db, log: log}
}

// channel asks PostgreSQL for the schema's channel, retrying as the listener reconnects until it
// answers: until then the feed is not up, so the watcher trusts no cache. It fails only when
// ctx is done.
func (f *AccessFeed) channel(ctx context.Context) (string, error) {
	wait := feedReconnectMin
	for logged := false; ; logged = true {
		var channel string
		err := f.db.db.GetContext(ctx, &channel, `SELECT `+accessChannel)
		if err == nil {
			return channel, nil
		}
		if !logged {
			f.log.Warn("store: the access feed cannot reach PostgreSQL; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, feedReconnectMax)
	}
}

// Watch implements flightgraph.AccessFeed. On SQLite it says the feed is up and waits: the one
// process hears of every change from its own service.
func (f *AccessFeed) Watch(ctx context.Context, w flightgraph.AccessWatcher) error {
	if f.db.dialect != Postgres {
		w.AccessFeedUp()
		<-ctx.Done()
		return nil
	}
	dsn, err := listenerDSN(f.db.dsn)
	if err != nil {
		return err
	}
	channel, err := f.channel(ctx)
	if err != nil {
		return nil // ctx is done
	}
	st := &feedState{w: w, responsive: true}
	var attemptLogged bool // only the first failed attempt of a spell is logged
	l := pq.NewListener(dsn, feedReconnectMin, feedReconnectMax, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventConnected, pq.ListenerEventReconnected:
			attemptLogged = false
			st.update(func() { st.connected, st.responsive = true, true }, nil)
		case pq.ListenerEventDisconnected:
			st.update(func() { st.connected = false }, err)
		case pq.ListenerEventConnectionAttemptFailed:
			if !attemptLogged {
				attemptLogged = true
				f.log.Warn("store: the access feed cannot connect to PostgreSQL; will retry", "err", err)
			}
		}
	})
	defer func() {
		l.Close()
		// Stopped with ctx (the server shuts down): the error says so, and the guard does not
		// warn of an outage.
		stopped := errors.New("the access feed stopped")
		if ctx.Err() != nil {
			stopped = fmt.Errorf("the access feed stopped: %w", context.Cause(ctx))
		}
		st.update(func() { st.connected = false }, stopped)
	}()
	go func() {
		// Listen waits for the connection; Close ends the wait.
		if err := l.Listen(channel); err != nil {
			if ctx.Err() == nil {
				f.log.Error("store: the access feed cannot listen", "err", err)
			}
			return
		}
		st.update(func() { st.listening = true }, nil)
	}()

	every, timeout := cmp.Or(f.PingEvery, feedPingEvery), cmp.Or(f.PingTimeout, feedPingTimeout)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var (
		ping     chan error       // the answer of the ping in flight, nil when none is
		deadline <-chan time.Time // when that ping is late
	)
	for {
		select {
		case <-ctx.Done():
			return nil
		case n, ok := <-l.Notify:
			if !ok {
				return nil
			}
			// A nil notification follows a reconnect, which the event callback reported already.
			if n != nil {
				if c, ok := decodeChange(n.Extra); ok {
					st.changed(c)
				}
			}
		case <-tick.C:
			if ping == nil {
				ping, deadline = make(chan error, 1), time.After(timeout)
				go func(answer chan<- error) { answer <- l.Ping() }(ping)
			}
		case <-deadline:
			deadline = nil
			st.update(func() { st.responsive = false }, fmt.Errorf("the listener's connection did not answer a ping in %v", timeout))
		case err := <-ping:
			ping, deadline = nil, nil
			st.update(func() { st.responsive = err == nil }, err)
		}
	}
}

// feedState decides when the feed is up: connected, listening, and answering pings. It tells
// the watcher of each change of that, and of changes, one call at a time.
type feedState struct {
	mu                                   sync.Mutex
	w                                    flightgraph.AccessWatcher
	connected, listening, responsive, up bool
}

func (s *feedState) update(change func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change()
	switch live := s.connected && s.listening && s.responsive; {
	case live && !s.up:
		s.up = true
		s.w.AccessFeedUp()
	case !live && s.up:
		s.up = false
		if err == nil {
			err = errors.New("the access feed's connection is lost")
		}
		s.w.AccessFeedDown(err)
	}
}

func (s *feedState) changed(c flightgraph.AccessChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.AccessChanged(c)
}

func decodeChange(payload string) (flightgraph.AccessChange, bool) {
	kind, id, ok := strings.Cut(payload, ":")
	switch {
	case !ok || id == "":
		return flightgraph.AccessChange{}, false
	case kind == "key":
		return flightgraph.AccessChange{KeyID: id}, true
	case kind == "family":
		return flightgraph.AccessChange{FamilyID: id}, true
	}
	return flightgraph.AccessChange{}, false
}

// listenerDSN is dsn with the feed's application_name.
func listenerDSN(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("store: the database URL does not parse")
	}
	q := u.Query()
	name := q.Get("application_name")
	if name == "" {
		name = "flightgraph"
	}
	q.Set("application_name", name+"-access-feed")
	u.RawQuery = q.Encode()
	return u.String(), nil
}
