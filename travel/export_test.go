package travel

import "context"

// SetCandidateBounds lowers the bounds of a search's candidate flights for a test, until restore.
func SetCandidateBounds(perDay, rows int) (restore func()) {
	d, r := maxCandidates, maxCandidateRows
	maxCandidates, maxCandidateRows = perDay, rows
	return func() { maxCandidates, maxCandidateRows = d, r }
}

// CargoHold returns the lower deck figures of an aircraft type: its volume in litres and its
// maximum payload in kg; ok is false for a type without any.
func CargoHold(typeCode string) (litres, payloadKg int, ok bool) {
	h, ok := holds[typeCode]
	return h.litres, h.payloadKg, ok
}

// TakeAll takes every slot, as callers at work would, until give.
func (s *Slots) TakeAll() (give func()) {
	for range cap(s.all) {
		s.all <- struct{}{}
	}
	return func() {
		for range cap(s.all) {
			<-s.all
		}
	}
}

// Taken is how many slots are taken, and how many callers hold or wait for a turn.
func (s *Slots) Taken() (slots, callers int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all), len(s.callers)
}

// Hold enters as the engine does for ctx's caller, says so on started, and leaves on release.
func (s *Slots) Hold(ctx context.Context, started chan<- struct{}, release <-chan struct{}) {
	if err := s.enter(ctx); err != nil {
		panic(err)
	}
	close(started)
	<-release
	s.leave(ctx)
}
