package access

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestMemoryLockoutSweeps: the windows of identifiers tried once (an enumeration) leave memory
// once they end, rather than piling up for ever.
func TestMemoryLockoutSweeps(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	l := NewMemoryLockout(func() time.Time { return now })
	for i := range 1000 {
		l.Attempt(context.Background(), SignInKey(SignInPortal, "user"+strconv.Itoa(i)+"@example.com"))
	}
	now = now.Add(SignInWindow)
	l.Attempt(context.Background(), SignInKey(SignInPortal, "ada@example.com"))
	if n := len(l.windows); n != 1 {
		t.Fatalf("%d windows held after the others ended, want 1", n)
	}
}
