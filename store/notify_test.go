package store_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// feedEvents records what an access feed tells, in order.
type feedEvents chan string

func (e feedEvents) AccessChanged(c flightgraph.AccessChange) {
	if c.FamilyID != "" {
		e <- "family:" + c.FamilyID
		return
	}
	e <- "key:" + c.KeyID
}
func (e feedEvents) AccessFeedUp()            { e <- "up" }
func (e feedEvents) AccessFeedDown(err error) { e <- "down" }

// expect fails the test unless the next event, within d, is want.
func (e feedEvents) expect(t *testing.T, want string, d time.Duration) {
	t.Helper()
	select {
	case got := <-e:
		if got != want {
			t.Fatalf("the feed told %q, want %q", got, want)
		}
	case <-time.After(d):
		t.Fatalf("the feed told nothing in %v, want %q", d, want)
	}
}

// TestAccessFeed: the store announces each access change in the transaction that makes it, so a
// rolled-back change is never told and a committed one is, to the feeds of its schema only; and a feed whose connection goes
// silent (a partition: no reset, no error) counts itself down, and up again when it answers.
func TestAccessFeed(t *testing.T) {
	storetest.DatabaseURL(t)
	u, err := url.Parse(storetest.DSN(t, store.Postgres, os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	proxy := startPauseProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	feed := store.NewAccessFeed(db, quiet)
	feed.PingEvery, feed.PingTimeout = 100*time.Millisecond, 300*time.Millisecond
	events := make(feedEvents, 100)
	done := make(chan error, 1)
	go func() { done <- feed.Watch(ctx, events) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	}()
	events.expect(t, "up", 10*time.Second)

	st := store.NewAccessStore(db)
	now := time.Now().UTC().Truncate(time.Second)
	rollBack := errors.New("roll back")
	if err := st.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if err := tx.UpdateKey(ctx, &flightgraph.Key{ID: "key-rolled-back", Status: flightgraph.KeyRevoked}); err != nil {
			return err
		}
		return rollBack
	}); !errors.Is(err, rollBack) {
		t.Fatalf("InTx: %v", err)
	}
	// Another schema of the database is another deployment (or a test beside this one): its
	// changes are not this feed's.
	other, err := store.Open(ctx, storetest.DSN(t, store.Postgres, os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.NewAccessStore(other).InTx(ctx, func(tx flightgraph.AccessTx) error {
		return tx.UpdateKey(ctx, &flightgraph.Key{ID: "key-of-another-schema", Status: flightgraph.KeyRevoked})
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.RevokeTokenFamily(ctx, "family-1", now) }); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "family:family-1", 5*time.Second)
	// Deleting an application announces each of its keys.
	if err := st.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if err := tx.CreateAccount(ctx, &flightgraph.Account{ID: "acc-1", Email: "feed@example.com", Name: "Feed", Role: flightgraph.RoleDeveloper, CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.CreateApplication(ctx, &flightgraph.Application{ID: "app-1", AccountID: "acc-1", Name: "Feed", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		return tx.CreateKey(ctx, &flightgraph.Key{ID: "key-1", ApplicationID: "app-1", Hint: "h", KeyHash: "kh", SecretHash: "sh", Status: flightgraph.KeyActive, CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.DeleteApplication(ctx, "app-1") }); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "key:key-1", 5*time.Second)

	proxy.pause(true)
	events.expect(t, "down", 5*time.Second)
	proxy.pause(false)
	events.expect(t, "up", 10*time.Second)
}

// pauseProxy forwards TCP connections to a target; while paused it forwards nothing and closes
// nothing, as a network partition would.
type pauseProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	conns  []net.Conn
}

func startPauseProxy(t *testing.T, target string) *pauseProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pauseProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.pause(false)
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *pauseProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go p.pump(out, in)
		go p.pump(in, out)
	}
}

func (p *pauseProxy) pump(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.paused {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *pauseProxy) pause(on bool) {
	p.mu.Lock()
	p.paused = on
	p.mu.Unlock()
	p.cond.Broadcast()
}
