package access

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
)

// cheapHasher keeps argon2id but makes it cheap: these tests are about the gate, not the hash.
var cheapHasher = PasswordHasher{Time: 1, Memory: 64, Threads: 1}

// TestHashGateBounds: with its slots taken, the gate lets no hash through; a freed slot lets the
// waiters through, and a waiter whose context ends gives up with ECodeTimeout, computing nothing.
func TestHashGateBounds(t *testing.T) {
	g := NewHashGate(2)
	stored := cheapHasher.Hash("correct horse battery")
	g.slots <- struct{}{} // two hashes of someone else's are under way
	g.slots <- struct{}{}

	var wg sync.WaitGroup
	results := make(chan bool, 3)
	for range 3 {
		wg.Go(func() {
			ok, err := g.Verify(context.Background(), cheapHasher, "correct horse battery", stored)
			if err != nil {
				t.Error(err)
			}
			results <- ok
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := g.Hash(ctx, cheapHasher, "another password")
		gaveUp <- err
	}()
	waitFor(t, "4 hashes waiting", func() bool { return g.Waiting() == 4 })
	if n := g.Computed(); n != 0 {
		t.Fatalf("%d hashes computed with every slot taken", n)
	}
	cancel()
	if err := <-gaveUp; flightgraph.ErrorCode(err) != flightgraph.ECodeTimeout {
		t.Fatalf("a waiter whose context ended: err = %v, want %s", err, flightgraph.ECodeTimeout)
	}
	<-g.slots // one of the others' hashes ends: the waiters go through its slot one by one
	wg.Wait()
	close(results)
	for ok := range results {
		if !ok {
			t.Fatal("the right password did not verify")
		}
	}
	if n, w, held := g.Computed(), g.Waiting(), len(g.slots); n != 3 || w != 0 || held != 1 {
		t.Fatalf("%d computed, %d waiting, %d slots held; want 3, 0 and the 1 still taken", n, w, held)
	}
	if _, err := g.Hash(ctx, cheapHasher, "x"); flightgraph.ErrorCode(err) != flightgraph.ECodeTimeout {
		t.Fatalf("a hash for a request that is over: err = %v, want %s", err, flightgraph.ECodeTimeout)
	}
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// TestDecoyCostsOneHash: an unknown account costs one hash of the hasher's parameters, like a
// known one with a wrong password, and never matches.
func TestDecoyCostsOneHash(t *testing.T) {
	g := NewHashGate(1)
	if ok, err := g.Matches(context.Background(), cheapHasher, "decoy", ""); ok || err != nil {
		t.Fatalf("Matches without an account = %v, %v; want false", ok, err)
	}
	if n := g.Computed(); n != 1 {
		t.Fatalf("%d hashes for an unknown account, want 1", n)
	}
	if want := "$argon2id$v=19$m=64,t=1,p=1$"; cheapHasher.decoy()[:len(want)] != want {
		t.Fatalf("decoy %s does not have the hasher's parameters", cheapHasher.decoy())
	}
}
