package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// stalledLegs makes the legs lookup take stall whatever its context says, as work that does not
// watch its context would, and then does the real lookup unless the context is done.
type stalledLegs struct {
	flightgraph.FlightStore
	stall time.Duration
}

func (s stalledLegs) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	time.Sleep(s.stall)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.FlightStore.LegsByFlightIDs(ctx, ids)
}

// stalledLimiter makes every limit decision take stall whatever its context says.
type stalledLimiter struct {
	access.Limiter
	stall time.Duration
}

func (l stalledLimiter) Admit(ctx context.Context, sub string, limits flightgraph.Limits, calls int) (access.Decision, error) {
	time.Sleep(l.stall)
	return l.Limiter.Admit(ctx, sub, limits, calls)
}

// requestLines returns the statuses of the access log's request lines.
func requestLines(log string) map[string]int {
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`msg=request .*status=(\d+)`).FindAllStringSubmatch(log, -1) {
		out[m[1]]++
	}
	return out
}

// TestClientHangUpIsNotAServerError: a client that leaves while its request is admitted (gqlgen
// then answers nothing at all) or while it executes is no server error: no panic, no 500, no
// ERROR line; the access log records 499.
func TestClientHangUpIsNotAServerError(t *testing.T) {
	const stall = 150 * time.Millisecond
	for _, c := range []struct {
		name  string
		tweak func(*serverConfig)
	}{
		{"during admission", func(c *serverConfig) {
			c.NewLimiter = func(usage access.DayUsage) access.Limiter {
				return stalledLimiter{access.NewMemoryLimiter(usage, c.Now), stall}
			}
		}},
		{"during execution", func(c *serverConfig) { c.Stores.Flights = stalledLegs{c.Stores.Flights, stall} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), c.tweak)
			body := jsonBody(departures, departuresVars(5))
			for range 20 {
				ctx, cancel := context.WithTimeout(context.Background(), stall/3)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("api-key", s.demo.APIKey)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
					t.Fatalf("the client got %d before it left", resp.StatusCode)
				}
				cancel()
			}
			// Let the server finish the requests its clients left.
			deadline := time.Now().Add(10 * time.Second)
			for requestLines(s.log.String())["499"] < 20 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			log := s.log.String()
			if lines := requestLines(log); lines["499"] != 20 || lines["500"] != 0 {
				t.Errorf("request lines by status: %v, want 20 × 499", lines)
			}
			for _, bad := range []string{"level=ERROR", "panic"} {
				if strings.Contains(log, bad) {
					t.Errorf("the log has %q:\n%s", bad, log)
				}
			}
		})
	}
}

// TestDeadlineStopsTheWork: once a request's deadline passes, nothing more of it reaches the
// database: no resolver gets another value (graph.Load), no loader fetches (Loader.get),
// and the answer says the time ran out.
func TestDeadlineStopsTheWork(t *testing.T) {
	const timeout = 100 * time.Millisecond
	var (
		started atomic.Int64 // Unix ns when the request started
		late    atomic.Int64 // queries attempted after the deadline
	)
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServerWith(t, db, func(c *serverConfig) {
		c.DefaultPlans = true // no set-up calls, which the short deadline would cut off on a loaded machine
		c.Server.RequestTimeout = timeout
		c.Stores.Flights = stalledLegs{c.Stores.Flights, 3 * timeout}
	})
	db.OnQuery = func() {
		// A query that started a hair before the deadline is not late; 10 ms is the margin.
		if at := started.Load(); at != 0 && time.Since(time.Unix(0, at)) > timeout+10*time.Millisecond {
			late.Add(1)
		}
	}
	started.Store(time.Now().UnixNano())
	resp := s.query(t, departures, departuresVars(20))
	started.Store(0)
	if n := late.Load(); n != 0 {
		t.Errorf("%d queries after the deadline", n)
	}
	if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeTimeout {
		t.Fatalf("errors %+v, want %s", resp.Errors, flightgraph.ECodeTimeout)
	}
	if strings.Contains(s.log.String(), "level=ERROR") {
		t.Errorf("a deadline is logged as an error:\n%s", s.log)
	}
}

// rawRequest writes head and the first part of a body on a new connection to the server, then
// does what finish says, and returns what the server answered, if anything.
func rawRequest(t *testing.T, addr, head, part string, finish func(net.Conn)) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head+part); err != nil {
		t.Fatal(err)
	}
	finish(conn)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(bufio.NewReader(conn))
	return string(b)
}

// TestClientFaultsAreNotServerFaults: a body too slow to arrive answers 408, a body cut off 400,
// a body too large 413, each with the catalogue's code and logged at INFO, never as a server
// error.
func TestClientFaultsAreNotServerFaults(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	ts := httptest.NewUnstartedServer(s.srv)
	ts.Config.ReadTimeout = 300 * time.Millisecond
	ts.Start()
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "http://")
	head := func(length int) string {
		return fmt.Sprintf("POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\napi-key: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", s.demo.APIKey, length)
	}

	slow := rawRequest(t, addr, head(100), `{"query":`, func(net.Conn) { time.Sleep(600 * time.Millisecond) })
	if !strings.HasPrefix(slow, "HTTP/1.1 408") || !strings.Contains(slow, flightgraph.ECodeBodyTimeout) {
		t.Errorf("slow body: %q", slow)
	}
	rawRequest(t, addr, head(100), `{"query":`, func(c net.Conn) { c.(*net.TCPConn).CloseWrite() })
	big := `{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("x", 300<<10) + `"}}`
	code, _, body := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": s.demo.APIKey}, big)
	if code != http.StatusRequestEntityTooLarge || gqlCode(t, body) != flightgraph.ECodeBodyTooLarge {
		t.Errorf("large body: %d %s", code, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for requestLines(s.log.String())["400"] == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log := s.log.String()
	lines := requestLines(log)
	if lines["408"] != 1 || lines["400"] != 1 || lines["413"] != 1 || lines["500"] != 0 {
		t.Errorf("request lines by status: %v", lines)
	}
	if strings.Contains(log, "level=ERROR") {
		t.Errorf("a client's fault is logged as an error:\n%s", log)
	}
}

// TestSearchTextIsText: a search with a control character (a NUL cut the pattern short on SQLite
// and matched every airport) is refused with INSP_400.002.
func TestSearchTextIsText(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	resp := s.query(t, `query($q: String!) { airports(search: $q) { totalCount } }`, map[string]any{"q": "\x00zzz"})
	if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeBadFormat {
		t.Fatalf("%s %+v", resp.Data, resp.Errors)
	}
}
