package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestAttackSlowBodyHoldsNoHeavySlot: a REST heavy route with a body (all-deals, 5 calls) must
// not take a heavy-work slot while its body has not arrived. A client that sends the headers and
// then dribbles the body (or never sends it) would otherwise hold a slot for the server's
// ReadTimeout / the request timeout while doing no work, and a few keys doing so shed everyone
// else's heavy calls with 503 WS_503.000.
func TestAttackSlowBodyHoldsNoHeavySlot(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.SnapshotTTL = time.Hour
		c.HeavyConcurrency = 1
		c.QueueWait = 20 * time.Millisecond
	})
	token := s.bearerToken(t, "")
	conn, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers, and one byte of a 1000-byte body; the rest never comes.
	fmt.Fprintf(conn, "POST /opendata/offers/v1/best-fare-offers/all-deals HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nAccept: application/hal+json\r\nContent-Length: 1000\r\n\r\n{", token)

	deadline := time.Now().Add(2 * time.Second)
	held := false
	for time.Now().Before(deadline) {
		if slots, _ := s.srv.Guard.Heavy.Taken(); slots > 0 {
			held = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if held {
		// Another caller's heavy call is now shed although nothing heavy runs.
		leave, err := s.srv.Guard.Heavy.Enter(context.Background(), "another key")
		if err == nil {
			leave()
		}
		t.Errorf("a request whose body has not arrived holds a heavy-work slot (another caller's heavy call: %v)", err)
	}
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	fmt.Fprintf(conn, "%999s", "}")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("the padded body, once it arrived: %v %v, want 400", resp, err)
	}
	if slots, callers := s.srv.Guard.Heavy.Taken(); slots != 0 || callers != 0 {
		t.Errorf("%d slots, %d turns taken after the request", slots, callers)
	}
}
