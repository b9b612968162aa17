package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// tcpProxy forwards connections to a target until it is cut: then it drops every connection it
// holds and refuses new ones (accepts and closes them at once), as a database host that went away
// would look to its clients, until it is restored. Tests put it between the server and the
// shared PostgreSQL, which they must never stop themselves.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			continue
		}
		go func() { io.Copy(up, c); up.Close(); c.Close() }()
		go func() { io.Copy(c, up); up.Close(); c.Close() }()
	}
}

// track records a proxied pair, unless the proxy was cut meanwhile.
func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

// Cut drops every connection and refuses new ones.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore lets connections through again.
func (p *tcpProxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// driverText finds what a driver's error would leak into an answer. Words are matched whole: a
// random token or key may hold "EOF" or "sql" among its letters.
var driverText = regexp.MustCompile(`\bpq:|\bdial tcp\b|\bconnection reset\b|\bbroken pipe\b|\bEOF\b|\bsql:|\bconnection refused\b`)

// outcome is one answer of a load run.
type outcome struct {
	at     time.Time
	kind   string
	status int
	code   string
	body   string
	took   time.Duration
	err    error
}

// TestDatabaseOutageUnderLoad takes PostgreSQL away from a server under load, through a proxy of
// the test's own, and brings it back: no raw 500 and no driver text at any time, no valid session
// told to sign in again, the outage answered as WS_502.000, and every kind of call served again
// within a second of the database's return: every call that starts later than that succeeds, and
// every kind has such calls. (When the first success after the return came is logged, not held to
// a bound: on a loaded machine under the race detector the workers may start no call of a kind for
// a few hundred milliseconds, which says nothing of the server.)
func TestDatabaseOutageUnderLoad(t *testing.T) {
	storetest.DatabaseURL(t)
	ctx := context.Background()
	dsn := storetest.DSN(t, store.Postgres, os.Getenv)
	direct, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if err := direct.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	opts := dataset.Options{Seed: dataset.DefaultSeed, Scale: 1, DaysBack: 1, DaysAhead: 1}
	if _, err := dataset.Seed(ctx, store.NewDatasetStore(direct), opts, storetest.Now, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.Addr()
	u.RawQuery += "&connect_timeout=2"
	db, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Adopt(t, db, dsn) // the tests' own SQL goes around the proxy
	s := newServer(t, db)
	sessions := []string{
		s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).token,
		s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword).token,
	}
	day := storetest.Now.Format(flightgraph.DateLayout)
	type call struct {
		kind, method, path, body string
		headers                  map[string]string
	}
	calls := []call{
		{"graphql", http.MethodPost, "/graphql", jsonBody(departures, departuresVars(5)), map[string]string{"api-key": s.demo.APIKey}},
		{"rest", http.MethodGet, "/opendata/flightstatus?startRange=" + day + "T06:00:00Z&endRange=" + day + "T09:00:00Z&origin=AMS&pageSize=5", "",
			map[string]string{"api-key": s.demo.APIKey}},
		{"readyz", http.MethodGet, "/readyz", "", nil},
		{"token", http.MethodPost, "/oauthcust/oauth/token", "grant_type=client_credentials",
			map[string]string{"Authorization": s.oaDemoClient().basic(), "Content-Type": "application/x-www-form-urlencoded"}},
	}
	for _, tok := range sessions {
		calls = append(calls, call{"session", http.MethodPost, "/portal/graphql", jsonBody(`{ me { account { email } } }`, nil), map[string]string{"Authorization": "Bearer " + tok}})
	}
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(c call) outcome {
		req, _ := http.NewRequest(c.method, s.URL+c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		o := outcome{at: time.Now(), kind: c.kind}
		resp, err := client.Do(req)
		if err != nil {
			o.err = err
			return o
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		o.took = time.Since(o.at)
		o.status, o.body = resp.StatusCode, string(b)
		var e struct {
			Errors []struct {
				Code       string
				Extensions struct{ Code string }
			}
		}
		if json.Unmarshal(b, &e) == nil && len(e.Errors) > 0 {
			o.code = e.Errors[0].Code + e.Errors[0].Extensions.Code
		}
		return o
	}

	var (
		mu       sync.Mutex
		outcomes []outcome
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range 6 {
		wg.Go(func() {
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o := do(calls[i%len(calls)])
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Second)
	cutAt := time.Now()
	proxy.Cut()
	time.Sleep(1500 * time.Millisecond)
	restoredAt := time.Now()
	proxy.Restore()
	time.Sleep(2500 * time.Millisecond)
	close(stop)
	wg.Wait()

	var during, after, late int
	firstBack := map[string]time.Time{}
	servedLate := map[string]int{} // successes that started later than a second after the return
	for _, o := range outcomes {
		ok := o.err == nil && o.status == http.StatusOK && o.code == ""
		switch {
		case o.err != nil:
			t.Errorf("%s at %v: %v", o.kind, o.at.Sub(cutAt).Round(time.Millisecond), o.err)
		case o.status == http.StatusInternalServerError:
			t.Errorf("%s at %v: a raw 500: %.200s", o.kind, o.at.Sub(cutAt).Round(time.Millisecond), o.body)
		case o.code == flightgraph.ECodeNotSignedIn:
			t.Errorf("%s at %v: a valid session told to sign in again", o.kind, o.at.Sub(cutAt).Round(time.Millisecond))
		}
		for _, leak := range driverText.FindAllString(o.body, -1) {
			t.Errorf("%s: driver text %q in %.200s", o.kind, leak, o.body)
		}
		if o.at.After(cutAt) && o.at.Before(restoredAt) && !ok {
			during++
			switch o.kind {
			case "readyz":
			case "token": // RFC 6749's shape, and the database's status as on every edge
				if o.status != http.StatusBadGateway || !strings.Contains(o.body, `"server_error"`) {
					t.Errorf("token during the outage: %d %.200s, want 502 server_error", o.status, o.body)
				}
			default:
				if o.code != flightgraph.ECodeDatabase {
					t.Errorf("%s during the outage: %d %s %.200s, want %s", o.kind, o.status, o.code, o.body, flightgraph.ECodeDatabase)
				}
			}
		}
		if o.at.After(restoredAt) {
			after++
			if ok {
				if _, seen := firstBack[o.kind]; !seen {
					firstBack[o.kind] = o.at
				}
				if o.at.After(restoredAt.Add(time.Second)) {
					servedLate[o.kind]++
				}
			} else if o.at.After(restoredAt.Add(time.Second)) {
				late++
				t.Errorf("%s %v after the database came back: %d %s %.200s", o.kind, o.at.Sub(restoredAt).Round(time.Millisecond), o.status, o.code, o.body)
			}
		}
	}
	if during == 0 {
		t.Fatal("no call felt the outage: the proxy cut nothing")
	}
	for _, c := range calls {
		if servedLate[c.kind] == 0 {
			t.Errorf("%s: no call started later than a second after the database's return and succeeded", c.kind)
			for _, o := range outcomes {
				if o.kind == c.kind && o.at.After(restoredAt) {
					t.Logf("  %s at %v, took %v: %d %s %v", o.kind, o.at.Sub(restoredAt).Round(time.Millisecond), o.took.Round(time.Millisecond), o.status, o.code, o.err)
				}
			}
		}
	}
	if t.Failed() {
		for _, l := range strings.Split(s.log.String(), "\n") {
			if strings.Contains(l, "level=ERROR") {
				t.Log(l)
			}
		}
	}
	back := map[string]time.Duration{}
	for kind, at := range firstBack {
		back[kind] = at.Sub(restoredAt).Round(time.Millisecond)
	}
	t.Logf("%d calls: %d failed during the %v outage (WS_502.000, or readyz 503), %d after it, %d of them later than a second; first success after the database's return: %v",
		len(outcomes), during, restoredAt.Sub(cutAt).Round(time.Millisecond), after, late, back)
}
