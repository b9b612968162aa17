package server_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/access"
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
