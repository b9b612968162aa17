package access

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flightgraph/flightgraph"
)

// DefaultQueueWait is how long a heavy call waits for a slot before it is shed, unless the
// HeavySlots say otherwise: long enough to ride out a slot that is about to be given back, short
// enough that a refusal is answered in tens of milliseconds, never after the request's deadline.
const DefaultQueueWait = 50 * time.Millisecond

// HeavySlots bound the heavy work (flightgraph.Weight.Heavy) a replica does at once: an
// inspiration, a deals search or a long calendar reads and prices hundreds of times a flight's
// work, so that a few callers well within their plans could otherwise take every core and starve
// everyone's cheap calls. Each caller (its key; else its application; else its client address)
// has one slot at a time, of Slots: its second heavy call waits for its first.
//
// A call waits at most QueueWait. Then it is shed, before it is charged: ECodeHeavyTurn (429)
// when its caller's own turn is what it waits for, else ECodeShed (503); either with a
// RetryAfter from how long heavy work has lately been taking, so that clients come back when a
// slot is likely free rather than at once.
type HeavySlots struct {
	// QueueWait bounds the wait for a slot (DefaultQueueWait when 0).
	QueueWait time.Duration
	// OnShed, when set, is told of each call shed, with its code.
	OnShed func(code string)

	all     chan struct{}
	mu      sync.Mutex
	callers map[string]*turn
	// took is an exponentially weighted mean of how long heavy work held a slot, in ns.
	took atomic.Int64
}

// turn is a caller's one slot, and how many of its requests hold it or wait for it.
type turn struct {
	held  chan struct{}
	users int
}

// NewHeavySlots returns n slots; n < 1 counts as 1.
func NewHeavySlots(n int) *HeavySlots {
	return &HeavySlots{all: make(chan struct{}, max(n, 1)), callers: map[string]*turn{}}
}

// DefaultHeavySlots is how many heavy calls a replica runs at once unless configured: half the
// CPUs the process may use, at least one, so that the other half answers the cheap calls however
// many heavy ones arrive.
func DefaultHeavySlots(cpus int) int { return max(cpus/2, 1) }

// Enter takes who's turn, then a slot, waiting at most QueueWait (and never past ctx), and
// returns the function that gives them back. Its errors are the refusals above, or ECodeTimeout
// when ctx ends first.
func (s *HeavySlots) Enter(ctx context.Context, who string) (leave func(), _ error) {
	s.mu.Lock()
	t := s.callers[who]
	if t == nil {
		t = &turn{held: make(chan struct{}, 1)}
		s.callers[who] = t
	}
	t.users++
	s.mu.Unlock()

	wait := s.QueueWait
	if wait <= 0 {
		wait = DefaultQueueWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case t.held <- struct{}{}:
	case <-timer.C:
		s.done(who, t)
		return nil, s.shed(flightgraph.ECodeHeavyTurn, "this key's heavy search is still running: one runs at a time")
	case <-ctx.Done():
		s.done(who, t)
		return nil, s.timeout(ctx)
	}
	select {
	case s.all <- struct{}{}:
	case <-timer.C:
		<-t.held
		s.done(who, t)
		return nil, s.shed(flightgraph.ECodeShed, "this replica runs as many heavy searches as it can")
	case <-ctx.Done():
		<-t.held
		s.done(who, t)
		return nil, s.timeout(ctx)
	}
	start := time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.observe(time.Since(start))
			<-s.all
			<-t.held
			s.done(who, t)
		})
	}, nil
}

// done counts a request off its caller's turn, and forgets the turn when no request needs it.
func (s *HeavySlots) done(who string, t *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.users--; t.users == 0 {
		delete(s.callers, who)
	}
}

// observe folds how long a slot was held into the mean that RetryAfter reads.
func (s *HeavySlots) observe(d time.Duration) {
	for {
		old := s.took.Load()
		next := int64(d)
		if old != 0 {
			next = old + (int64(d)-old)/8
		}
		if s.took.CompareAndSwap(old, next) {
			return
		}
	}
}

// RetryAfter is when a shed call may come back: the time heavy work has lately been taking,
// rounded up to whole seconds, at least 1 and at most 30.
func (s *HeavySlots) RetryAfter() time.Duration {
	secs := math.Ceil(time.Duration(s.took.Load()).Seconds())
	return time.Duration(min(max(secs, 1), 30)) * time.Second
}

func (s *HeavySlots) shed(code, why string) error {
	if s.OnShed != nil {
		s.OnShed(code)
	}
	return &flightgraph.Error{Code: code, RetryAfter: s.RetryAfter(), Message: why + "; retry after the Retry-After seconds."}
}

func (s *HeavySlots) timeout(ctx context.Context) error {
	return &flightgraph.Error{Code: flightgraph.ECodeTimeout, Message: "The request ran out of time waiting for a heavy-work slot.", Err: ctx.Err()}
}

// Taken is how many slots are taken, and how many callers hold or wait for a turn.
func (s *HeavySlots) Taken() (slots, callers int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all), len(s.callers)
}
