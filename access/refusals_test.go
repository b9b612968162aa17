package access_test

import (
	"context"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// TestClientAddress: a client is its IPv4 host, or its IPv6 /64, whatever the port.
func TestClientAddress(t *testing.T) {
	for _, c := range []struct{ name, remote, want string }{
		{"IPv4", "192.0.2.7:51000", "192.0.2.7"},
		{"IPv4 other port", "192.0.2.7:1", "192.0.2.7"},
		{"IPv6 /64", "[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"IPv6 same /64", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:9", "2001:db8:1:2::/64"},
		{"IPv6 next /64", "[2001:db8:1:3::1]:9", "2001:db8:1:3::/64"},
		{"no port", "192.0.2.8", "192.0.2.8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := access.ClientAddress(c.remote); got != c.want {
				t.Errorf("ClientAddress(%q) = %q, want %q", c.remote, got, c.want)
			}
		})
	}
}

// TestRefusalsWaitForWorkInFlight: a refusals window full of places held by requests still at
// work makes the next request wait for one of them, not refuse it (issue 22: a key's own calls in
// flight filled its window); it gets a place once one is given back. A window full of refusals
// refuses at once; one that stays full of work refuses once the wait is over.
func TestRefusalsWaitForWorkInFlight(t *testing.T) {
	ctx := context.Background()
	r := access.NewRefusals(access.RefusalLimits{PerAddress: 2, PerCredential: 2}, time.Now)
	const addr = "192.0.2.1"
	done1, err := r.Reserve(ctx, addr, "")
	if err != nil {
		t.Fatal(err)
	}
	done2, err := r.Reserve(ctx, addr, "")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var done3 func(bool)
	go func() {
		d, err := r.Reserve(ctx, addr, "")
		done3 = d
		if err != nil {
			got <- err
			return
		}
		got <- nil
	}()
	select {
	case err := <-got:
		t.Fatalf("a third request while two are at work: %v, want it to wait", err)
	case <-time.After(50 * time.Millisecond):
	}
	done1(false) // served: its place is free
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("a third request once one of two at work was served: %v", err)
		}
	case <-time.After(access.RefusalWait / 2):
		t.Fatal("a third request still waits once a place was given back")
	}

	// Both refused: the window holds two refusals and nothing at work.
	done2(true)
	done3(true)
	start := time.Now()
	if _, err := r.Reserve(ctx, addr, ""); err == nil || err.Code != flightgraph.ECodePerSecondLimit {
		t.Fatalf("a request after two refusals: %v, want %s", err, flightgraph.ECodePerSecondLimit)
	}
	if took := time.Since(start); took > access.RefusalWait/2 {
		t.Errorf("a window full of refusals answered in %v, want at once", took)
	}

	// A credential's window full of work that does not end: refused when the caller gives up.
	hash := access.CredentialHash("a key")
	r.Authenticated(hash)
	for range 2 {
		if _, err := r.ReserveCredential(ctx, hash); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := r.Reserve(short, "192.0.2.2", hash); err == nil {
		t.Fatal("a request while the credential's window stays full of work was admitted")
	}
}
