package server

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flightgraph/flightgraph/access"
)

// ConnLimits bound the connections the API listener holds open. Each one holds an open file, and
// once the process's files are spent, accept fails ("too many open files") and every new client,
// a probe included, waits until it gives up; one client holding idle keep-alive connections
// could do that alone. A connection over a cap is refused as it is accepted, before anything is
// read from it: the listener resets it (TCP RST), which frees its file at once, leaves no
// TIME_WAIT behind and costs no goroutine, no buffer and no write to a peer that may not read.
type ConnLimits struct {
	// Max is the most connections open at once; zero or less means DefaultMaxConns of the
	// process's file limit.
	Max int
	// PerAddress is the most connections one client address (access.ClientAddress: the IPv4
	// host, the IPv6 /64) may hold open; zero or less means no cap of its own. Behind a proxy,
	// every connection comes from the proxy's address.
	PerAddress int
	// IdleTimeout is how long a keep-alive connection may wait for its next request
	// (DefaultIdleTimeout when zero). While more than PressureShare of Max are open, connections
	// idle for longer than PressureIdleTimeout (DefaultPressureIdleTimeout when zero) are closed,
	// the longest idle first, until no more than that share are open.
	IdleTimeout, PressureIdleTimeout time.Duration
}

const (
	DefaultIdleTimeout         = 2 * time.Minute
	DefaultPressureIdleTimeout = 5 * time.Second
	// DefaultMaxConnsPerAddress lets a busy NAT or a browser-heavy office through and keeps one
	// address to a small share of the default Max.
	DefaultMaxConnsPerAddress = 256
	// PressureShare is the share of ConnLimits.Max open over which idle connections wait at most
	// ConnLimits.PressureIdleTimeout.
	PressureShare = 0.5
)

// withDefaults fills the zero fields of l.
func (l ConnLimits) withDefaults() ConnLimits {
	if l.Max <= 0 {
		l.Max = DefaultMaxConns(FileLimit())
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.PressureIdleTimeout <= 0 {
		l.PressureIdleTimeout = min(DefaultPressureIdleTimeout, l.IdleTimeout)
	}
	return l
}

// Reserved open files and the bounds of the default cap (DefaultMaxConns).
const (
	// MinFileReserve is the fewest files kept for all but the API's connections: the store's
	// pool (20 PostgreSQL connections, or SQLite's database, WAL and shared-memory files), the
	// Redis pool (10 per CPU), SMTP, the metrics listener and its scrapers and probes, the log.
	MinFileReserve = 1024
	// MaxDefaultConns bounds the default cap by memory: an idle HTTP/1.1 connection holds its
	// goroutine's stack and its read and write buffers, about 21 KiB (15,000 held: 348 MiB
	// resident, BenchmarkIdleConnections), so 20,000 stay well under MemoryLimit.
	MaxDefaultConns = 20_000
	// FallbackMaxConns is the default cap where the file limit cannot be read.
	FallbackMaxConns = 4096
)

// DefaultMaxConns is the cap on open connections for a process that may open limit files: the
// limit less a reserve of a quarter of it and at least MinFileReserve (half of a limit under
// twice that), and at most MaxDefaultConns; FallbackMaxConns when the limit is unknown (0).
func DefaultMaxConns(limit uint64) int {
	if limit == 0 {
		return FallbackMaxConns
	}
	reserve := max(limit/4, min(MinFileReserve, limit/2))
	return int(min(limit-reserve, MaxDefaultConns))
}

// connLimiter holds the counts of the API listener's connections: open in all, by client
// address, and idle since when (from the http.Server's ConnState).
type connLimiter struct {
	limits     ConnLimits
	pressure   int // open connections over which idle ones are shed
	refused    *prometheus.CounterVec
	idleClosed prometheus.Counter

	mu        sync.Mutex
	open      int
	byAddress map[string]int
	idle      map[*limitedConn]time.Time
}

func newConnLimiter(limits ConnLimits, reg prometheus.Registerer) *connLimiter {
	l := &connLimiter{limits: limits, pressure: int(PressureShare * float64(limits.Max)),
		byAddress: map[string]int{}, idle: map[*limitedConn]time.Time{}}
	l.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flightgraph_connections_refused_total",
		Help: "Connections the API listener reset as it accepted them: their client address held --max-conns-per-address (reason address), or the listener --max-conns (reason total).",
	}, []string{"reason"})
	l.refused.WithLabelValues("address")
	l.refused.WithLabelValues("total")
	l.idleClosed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flightgraph_connections_idle_closed_total",
		Help: "Idle keep-alive connections closed after --pressure-idle-timeout because more than half of --max-conns were open.",
	})
	reg.MustRegister(l.refused, l.idleClosed, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "flightgraph_connections_open", Help: "Connections the API listener holds open.",
	}, func() float64 { l.mu.Lock(); defer l.mu.Unlock(); return float64(l.open) }))
	return l
}

// listener is ln with the caps: its Accept returns only connections within them.
func (l *connLimiter) listener(ln net.Listener) net.Listener { return &limitedListener{ln, l} }

type limitedListener struct {
	net.Listener
	l *connLimiter
}

func (ln *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := ln.l.admit(c); lc != nil {
			limitUnacked(c, UnackedTimeout)
			return lc, nil
		}
	}
}

// UnackedTimeout is how long what the API sends a client may stay unacknowledged before the
// kernel closes the connection (TCP_USER_TIMEOUT, on Linux). A client that is gone without a word
// (its network down, a half-open connection) is otherwise found only by TCP's retransmissions,
// some 15 minutes: a write into the socket's buffer succeeds, so a stream's per-write deadline
// does not fire, and once sent data is outstanding TCP's keepalive probes stop. A stream pinging
// such a client would hold its handler that long.
const UnackedTimeout = 30 * time.Second

// admit counts c in, or refuses it (nil) when its address or the listener holds its cap.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	address := access.ClientAddress(c.RemoteAddr().String())
	reason := ""
	l.mu.Lock()
	switch {
	case l.limits.PerAddress > 0 && l.byAddress[address] >= l.limits.PerAddress:
		reason = "address"
	case l.open >= l.limits.Max:
		reason = "total"
	default:
		l.open++
		l.byAddress[address]++
	}
	l.mu.Unlock()
	if reason != "" {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with a reset: nothing lingers, on either side
		}
		c.Close()
		l.refused.WithLabelValues(reason).Inc()
		return nil
	}
	return &limitedConn{Conn: c, l: l, address: address}
}

// limitedConn is an admitted connection; closing it gives its place back.
type limitedConn struct {
	net.Conn
	l       *connLimiter
	address string
	once    sync.Once
	closed  bool // under l.mu
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		l := c.l
		l.mu.Lock()
		c.closed = true
		l.open--
		if l.byAddress[c.address]--; l.byAddress[c.address] <= 0 {
			delete(l.byAddress, c.address)
		}
		delete(l.idle, c)
		l.mu.Unlock()
	})
	return c.Conn.Close()
}

// CloseWrite keeps the http.Server's graceful close (a FIN, then a short wait for the client's
// last bytes) on the wrapped TCP connection.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connState is the http.Server's ConnState hook: it notes when each connection went idle.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle && !lc.closed {
		l.idle[lc] = time.Now()
	} else {
		delete(l.idle, lc)
	}
}

// shed closes, the longest idle first, connections idle for PressureIdleTimeout or longer while
// more than the pressure share are open, until no more than that share are; it returns how many.
// A request that arrives on one as it is closed fails as it would at the idle timeout, which
// clients retry on a new connection.
func (l *connLimiter) shed(now time.Time) int {
	type idleConn struct {
		c     *limitedConn
		since time.Time
	}
	l.mu.Lock()
	excess := l.open - l.pressure
	if excess <= 0 {
		l.mu.Unlock()
		return 0
	}
	var old []idleConn
	for c, since := range l.idle {
		if now.Sub(since) >= l.limits.PressureIdleTimeout {
			old = append(old, idleConn{c, since})
		}
	}
	slices.SortFunc(old, func(a, b idleConn) int { return a.since.Compare(b.since) })
	old = old[:min(len(old), excess)]
	for _, o := range old {
		delete(l.idle, o.c) // not chosen twice
	}
	l.mu.Unlock()
	for _, o := range old {
		o.c.Close()
	}
	l.idleClosed.Add(float64(len(old)))
	return len(old)
}

// run sheds idle connections under pressure until ctx is done, checking several times per
// PressureIdleTimeout (at least once a second).
func (l *connLimiter) run(ctx context.Context) {
	t := time.NewTicker(min(time.Second, max(l.limits.PressureIdleTimeout/4, 10*time.Millisecond)))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			l.shed(now)
		}
	}
}
