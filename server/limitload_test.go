package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestManyClientsOfOneKeyInsideItsPlan is issue 22's bug: in a closed-loop load of 50 clients
// sharing one key granted 10,000 calls a second (the test plan), some calls were answered 429
// "over 10 refused requests in a second with this credential", although none was refused: the
// refusals window of a credential holds a place for each of its requests until it is admitted, so
// more than 10 requests of one key between authentication and admission at once (reading and
// parsing the body, the limiter's round trip to Redis) filled it. A request that finds the window
// full of requests at work now waits for one to end (access.Refusals.Reserve). With the
// production refusal limits (the defaults), PostgreSQL and the Redis limiter behind its fallback,
// every call is served; a 429 of any kind fails.
func TestManyClientsOfOneKeyInsideItsPlan(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		rdb, prefix := storetest.RedisClient(t)
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) {
			c.Refusals = access.RefusalLimits{}
			c.NewLimiter = func(usage access.DayUsage) access.Limiter {
				return access.NewFallback(access.NewRedisLimiter(rdb, prefix, usage), access.NewMemoryLimiter(usage, time.Now), c.Log)
			}
		})
		const clients, calls = 50, 4
		body := jsonBody(`{ airport(code: "AMS") { name } }`, nil)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			refused = map[int]int{}
			sample  string
		)
		start := make(chan struct{})
		for range clients {
			wg.Go(func() {
				c := &http.Client{} // a connection of its own, as separate clients have
				<-start
				for range calls {
					req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("api-key", s.demo.APIKey)
					resp, err := c.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"name"`) {
						mu.Lock()
						refused[resp.StatusCode]++
						sample = string(b)
						mu.Unlock()
					}
				}
			})
		}
		close(start)
		wg.Wait()
		if len(refused) > 0 {
			t.Errorf("%d clients of one key well inside its plan, %d calls each: not served %v, e.g. %.300s", clients, calls, refused, sample)
		}
	})
}

// TestAccessLogLevels: at INFO, a call that was served writes no access-log line (issue 22: a line
// each cost a cheap call a measurable share) and neither does a plan's 429, while an error does,
// with its request id; at DEBUG every request has its line; the request counter counts them all.
func TestAccessLogLevels(t *testing.T) {
	logs := &lockedBuffer{}
	level := new(slog.LevelVar)
	s := newServerWith(t, storetest.Open(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level}))
		c.DefaultPlans = true
	})
	key := map[string]string{"api-key": s.demo.APIKey}
	const ping = "/opendata/flightstatus/v1/ping"
	lines := func() []string { return regexp.MustCompile(`msg=request [^\n]*`).FindAllString(logs.String(), -1) }
	before := len(lines())
	for range flightgraph.DefaultLimits.PerSecond + 1 { // the frozen clock: the last one is a plan's 429
		s.call(t, http.MethodGet, ping, key, "")
	}
	if code, _, _ := s.call(t, http.MethodGet, ping, key, ""); code != http.StatusTooManyRequests {
		t.Fatalf("ping over the plan: %d, want 429", code)
	}
	s.call(t, http.MethodGet, "/opendata/nothing", nil, "")
	got := lines()[before:]
	if len(got) != 1 || !strings.Contains(got[0], "status=404") || !strings.Contains(got[0], "requestId=") {
		t.Errorf("request lines at INFO: %q, want the 404's only", got)
	}
	level.Set(slog.LevelDebug)
	s.call(t, http.MethodGet, "/healthz", nil, "")
	if got := lines(); !strings.Contains(got[len(got)-1], "status=200") {
		t.Errorf("at DEBUG, the last request line is %q, want the 200's", got[len(got)-1])
	}
	if body := s.metrics(t); !strings.Contains(body, `flightgraph_http_requests_total{code="200",method="GET",route="GET /opendata/{api}/{version}/ping"} 5`) ||
		!strings.Contains(body, `flightgraph_http_requests_total{code="429",method="GET",route="GET /opendata/{api}/{version}/ping"} 2`) {
		t.Errorf("the request counter does not count every ping:\n%s", body)
	}
}
