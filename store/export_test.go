package store

import (
	"time"

	"github.com/flightgraph/flightgraph"
)

// SetClock sets the clock of a snapshot, for its tests.
func (s *Snapshot) SetClock(now func() time.Time) { s.now = now }

// LoadedAt is when the snapshot a test reads was loaded; the zero time before the first load.
func (s *Snapshot) LoadedAt() time.Time {
	if snap := s.snap.Load(); snap != nil {
		return snap.loaded
	}
	return time.Time{}
}

// WaitForReload waits up to d for no load to be under way, and reports whether none is.
func (s *Snapshot) WaitForReload(d time.Duration) bool {
	select {
	case s.reload <- struct{}{}:
		<-s.reload
		return true
	case <-time.After(d):
		return false
	}
}

// SnapshotRetry is how long a failed load is not tried again.
const SnapshotRetry = snapshotRetry

// RetryAt is when a load is tried again after a failed one.
func (s *Snapshot) RetryAt() time.Time {
	s.reload <- struct{}{}
	defer func() { <-s.reload }()
	return s.retryAt
}

// SetPlaces sets the place store a snapshot reads.
func (s *Snapshot) SetPlaces(p flightgraph.PlaceStore) { s.places = p }
