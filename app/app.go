// Package app builds flightgraph's services once, from its stores and options: the travel
// service over the flight stores (behind the reference snapshot), and the access core (guard,
// limiter, usage, outbox, portal and token services) over the access store. flightgraph serve,
// the other subcommands, the tests and the load harness all build them here, so that each is
// wired one way; server.New takes them built.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"log/slog"
	"runtime"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/rest"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/travel"
)

// Stores are what the services read and write.
type Stores struct {
	Flights  flightgraph.FlightStore
	Places   flightgraph.PlaceStore
	Aircraft flightgraph.AircraftStore
	Network  flightgraph.NetworkStore
	Access   flightgraph.AccessStore
	Mail     flightgraph.MailStore
	Searches flightgraph.SearchStore
	// Dataset, when set, gives shopping the schedule beyond the operational window
	// (dataset.Horizon); unset, shopping reads the window only.
	Dataset flightgraph.DatasetStore
	// Events records and reads the flight status events.
	Events flightgraph.FlightEventStore
}

// StoresOf returns the stores of db.
func StoresOf(db *store.DB) Stores {
	return Stores{Flights: store.NewFlightStore(db), Places: store.NewPlaceStore(db), Aircraft: store.NewAircraftStore(db),
		Network: store.NewNetworkStore(db), Access: store.NewAccessStore(db), Mail: store.NewMailStore(db),
		Searches: store.NewSearchStore(db), Dataset: store.NewDatasetStore(db), Events: store.NewFlightEventStore(db)}
}

// Config is what the services are built of. Only Stores is required; the zero value of every
// other field takes its default.
type Config struct {
	Stores Stores
	Log    *slog.Logger // default: discard
	Now    func() time.Time
	// SnapshotTTL is how long the snapshot of reference data (places, fleet, carriers) is
	// trusted (store.Snapshot); 0 reads them from the store on every request.
	SnapshotTTL time.Duration
	// WarmFares has the fare index compute the hubs' inspirations of this month and the next
	// when the server starts running, and keep the index warm (travel.FareIndex.WarmHubs).
	WarmFares bool
	Mailer    access.Mailer // default: the log
	// NewLimiter builds the limiter over the usage counts; default: in-process.
	NewLimiter func(usage access.DayUsage) access.Limiter
	// AccessFeed tells this replica of the changes to access that other replicas commit
	// (PostgreSQL LISTEN/NOTIFY), so that its guard drops them from its cache at once. Nil for
	// one process.
	AccessFeed flightgraph.AccessFeed
	// EventFeed tells this replica of the flight status events other replicas record
	// (store.EventFeed); nil for one process.
	EventFeed interface {
		Watch(ctx context.Context, notify func(position int64)) error
	}
	Hasher access.PasswordHasher // default: access.DefaultPasswordHasher
	// PasswordHashConcurrency bounds the password hashes computed at once by the portal and the
	// token endpoint together; 0 means access.DefaultHashConcurrency.
	PasswordHashConcurrency int
	// Lockout counts sign-in and password grant attempts; default: in-process, on Now.
	Lockout access.Lockout
	// MailCounts counts the mail budget's mailboxes, client addresses and accounts
	// (access.MailBudget); default: in-process, on Now.
	MailCounts access.Lockout
	// MailLimits are the mail budgets; zero fields take access.DefaultMailLimits'.
	MailLimits access.MailLimits
	Tokens     access.TokenLifetimes
	PortalURL  string
	// OfferKey signs offer ids (travel.Service.OfferKey), at least 32 bytes; replicas share it.
	// It also keys the hashes of mail recipients (flightgraph.MailboxHash): of mailed searches,
	// and of the outbox's delivered messages (access.Outbox.Key). Nil: a random key of this
	// process, for tests and one-off commands.
	OfferKey []byte
	// HeavyConcurrency bounds the heavy calls (inspirations, deals, calendars: flightgraph.Weight)
	// run at once (access.HeavySlots); 0 means access.DefaultHeavySlots of GOMAXPROCS.
	HeavyConcurrency int
	// QueueWait bounds how long a heavy call waits for a slot before it is shed, uncharged;
	// 0 means access.DefaultQueueWait.
	QueueWait time.Duration
	// MailRetention is how long the outbox keeps what is left of a delivered or given-up message
	// (access.Sweeper); 0 means access.DefaultMailRetention.
	MailRetention time.Duration
	// Uncharged bounds the calls that charge no API (portal operations, introspection);
	// access.DefaultUncharged when zero.
	Uncharged access.UnchargedLimits
	// Refusals bound the refused requests a second of a client address and of a credential (see
	// access.Refusals); zero fields take the defaults.
	Refusals access.RefusalLimits
	// ResponseCacheBytes bounds the response cache (live.Cache: the public answers many callers
	// read, evicted by the status feed, and heavy searches' quotes for their second); 0 turns it
	// off, and every answer is computed.
	ResponseCacheBytes int
	// FlightCacheBytes bounds the entity cache of the flights read by id (live.CacheFlights:
	// a flight's status, an offer's segments, evicted by the status feed); 0 turns it off, and
	// every such read asks the store.
	FlightCacheBytes int
	// Trace, when set, starts the spans of the search engines' work (travel.Service.Trace,
	// tracing.Tracer.Work); nil traces nothing.
	Trace func(ctx context.Context, work string) (context.Context, func(error))
}

// Services are flightgraph's services, built once.
type Services struct {
	Log *slog.Logger
	Now func() time.Time
	// Travel is the flight domain, over the flight stores.
	Travel *travel.Service
	// Graph is what the GraphQL dataloaders read.
	Graph graph.Stores
	// Access is the portal's service: accounts, applications, keys, approval.
	Access *access.Service
	// Tokens is the OAuth 2.0 token endpoint.
	Tokens *access.TokenService
	Guard  *access.Guard
	Usage  *access.UsageRecorder
	Outbox *access.Outbox
	// Sweeper deletes delivered mail after the retention period, and expired sign-ups.
	Sweeper *access.Sweeper
	// Hashes is the gate every password hash goes through.
	Hashes  *access.HashGate
	Limiter access.Limiter
	Lockout access.Lockout
	// MailBudget is the one budget every mail is spent from: sign-up, mail-my-search, the
	// operators' notices and their decisions.
	MailBudget *access.MailBudget
	// Live opens the subscriptions to the flight status events; Clock records the transitions
	// time brings; EventFeed (nil for one process) tells the hub of other replicas' events.
	Live  *live.Service
	Clock *live.Clock
	// Answers is the response cache, nil when it is off (Config.ResponseCacheBytes); Flights is
	// the entity cache of the flights read by id, nil when it is off (Config.FlightCacheBytes).
	Answers   *live.Cache
	Flights   *live.Cache
	Events    flightgraph.FlightEventStore
	EventFeed interface {
		Watch(ctx context.Context, notify func(position int64)) error
	}
}

// New builds the services of cfg.
func New(cfg Config) *Services {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Hasher == (access.PasswordHasher{}) {
		cfg.Hasher = access.DefaultPasswordHasher
	}
	if cfg.PasswordHashConcurrency <= 0 {
		cfg.PasswordHashConcurrency = access.DefaultHashConcurrency
	}
	if cfg.Lockout == nil {
		cfg.Lockout = access.NewMemoryLockout(cfg.Now)
	}
	if cfg.Mailer == nil {
		cfg.Mailer = access.NewLogMailer(cfg.Log)
	}
	if cfg.OfferKey == nil {
		cfg.OfferKey = make([]byte, 32)
		rand.Read(cfg.OfferKey)
	}
	st := cfg.Stores
	clockFlights := st.Flights
	var hub *live.Hub
	if st.Events != nil {
		hub = live.NewHub(st.Events, cfg.Log)
	}
	var flightCache *live.Cache
	if cfg.FlightCacheBytes > 0 && hub != nil && st.Flights != nil {
		// The flights read by id come from the entity cache, kept as the status feed changes
		// them; the status clock (clockFlights) reads the store. While the hub gives its
		// watchers (this cache, then the response cache) an event, neither serves from memory
		// (Hub.Settled), so no answer is made from a flight one of them is about to evict.
		flightCache = live.NewCache(hub, cfg.FlightCacheBytes, cfg.Now)
		st.Flights = live.CacheFlights(st.Flights, flightCache)
	}
	if cfg.ResponseCacheBytes > 0 && hub != nil && st.Flights != nil {
		// Every read of flights for an answer records what the answer shows, so that the
		// status feed's events evict it from the response cache.
		st.Flights = live.TagFlights(st.Flights)
	}
	if cfg.SnapshotTTL > 0 {
		snap := store.NewSnapshot(st.Places, st.Aircraft, st.Network, cfg.SnapshotTTL, cfg.Log)
		st.Places, st.Aircraft, st.Network = snap.Places(), snap.Fleet(), snap.Network()
	}
	mailBudget := access.NewMailBudget(cfg.MailCounts, cfg.MailLimits, cfg.Now, cfg.Log)
	s := &Services{Log: cfg.Log, Now: cfg.Now, Lockout: cfg.Lockout, MailBudget: mailBudget,
		Travel: &travel.Service{Flights: st.Flights, Places: st.Places, Aircraft: st.Aircraft, Network: st.Network, Now: cfg.Now,
			OfferKey: cfg.OfferKey, Searches: st.Searches, MailBudget: mailBudget, RequireHeavySlot: true, Trace: cfg.Trace,
			Index: &travel.FareIndex{Log: cfg.Log, WarmHubs: cfg.WarmFares}}}
	// byID reads flights by id: past the stored window, from the schedule (the flights an
	// offer's segments show answer flight(id), _entities and REST's flight status too).
	byID := st.Flights
	if st.Dataset != nil {
		h := &dataset.Horizon{Operational: st.Flights, Dataset: st.Dataset, Log: cfg.Log}
		s.Travel.Shop, byID = h, h
	}
	heavy := access.NewHeavySlots(cmp.Or(cfg.HeavyConcurrency, access.DefaultHeavySlots(runtime.GOMAXPROCS(0))))
	heavy.QueueWait = cfg.QueueWait
	s.Usage = &access.UsageRecorder{Store: st.Access, Log: cfg.Log}
	s.Limiter = access.NewMemoryLimiter(s.Usage.DayUsage, cfg.Now)
	if cfg.NewLimiter != nil {
		s.Limiter = cfg.NewLimiter(s.Usage.DayUsage)
	}
	s.Usage.Attach(s.Limiter)
	refusals := access.NewRefusals(cfg.Refusals, cfg.Now)
	s.Guard = &access.Guard{Store: st.Access, Limiter: s.Limiter, Usage: s.Usage, Now: cfg.Now, Log: cfg.Log, Changes: cfg.AccessFeed,
		Uncharged: cfg.Uncharged, Refusals: refusals, Heavy: heavy}
	s.Outbox = access.NewOutbox(st.Mail, cfg.Mailer, cfg.Log)
	s.Outbox.Now, s.Outbox.Key = cfg.Now, cfg.OfferKey
	// Mail a request queues (a sign-up's link, a mailed search, an operator's notice) goes out
	// as its transaction commits; the outbox's tick stays for retries and for what a stopped
	// replica left behind.
	st.Mail.OnQueued(s.Outbox.Notify)
	s.Sweeper = &access.Sweeper{Mail: st.Mail, Access: st.Access, Retention: cfg.MailRetention, Now: cfg.Now, Log: cfg.Log}
	// One gate and one lockout for both ways of signing in, so that their hashes share one bound.
	s.Hashes = access.NewHashGate(cfg.PasswordHashConcurrency)
	s.Access = &access.Service{Store: st.Access, Hasher: cfg.Hasher, Hashes: s.Hashes, Lockout: cfg.Lockout, MailBudget: mailBudget, Now: cfg.Now, Log: cfg.Log,
		PortalURL: cfg.PortalURL, Changed: func(keyID string) { s.Guard.Forget(keyID); s.Outbox.Notify() },
		Operations: Operations(), Usage: s.Usage}
	s.Travel.Loyalty = s.Access.LoyaltyTier
	s.Tokens = &access.TokenService{Store: st.Access, Hasher: cfg.Hasher, Hashes: s.Hashes, Lockout: cfg.Lockout, Now: cfg.Now, Log: cfg.Log,
		Revoked: s.Guard.ForgetFamily, Lifetimes: cfg.Tokens, Limiter: s.Limiter, Uncharged: cfg.Uncharged, Refusals: refusals}
	if hub != nil {
		s.Flights = flightCache
		if r, ok := st.Events.(interface{ OnRecorded(func(int64)) }); ok {
			r.OnRecorded(hub.Notify)
		}
		s.Events, s.EventFeed = st.Events, cfg.EventFeed
		s.Live = &live.Service{Hub: hub, Recheck: s.Guard.StillAdmitted, Credential: access.CredentialOf}
		s.Clock = &live.Clock{Events: st.Events, Flights: clockFlights, Now: cfg.Now, Log: cfg.Log}
		if cfg.ResponseCacheBytes > 0 {
			s.Answers = live.NewCache(hub, cfg.ResponseCacheBytes, cfg.Now)
		}
	}
	s.Graph = graph.Stores{Flights: byID, Places: st.Places, Aircraft: st.Aircraft, Network: st.Network, Access: st.Access, Now: cfg.Now,
		UsageToday: func(ctx context.Context, subs []string) ([]int64, error) {
			return s.Usage.Today(ctx, subs, cfg.Now().UTC().Format(flightgraph.DateLayout))
		},
		UsageHistory: s.Access.UsageHistory, LimitRequests: s.Access.SubscriptionLimitRequests,
		Offers: func(ctx context.Context, ids []string) ([]*flightgraph.Offer, []error, error) {
			return s.Travel.Offers(ctx, "id", ids)
		},
		Carts: func(ctx context.Context, ids []string) ([]*flightgraph.ShoppingCart, []error, error) {
			return s.Travel.Carts(ctx, "id", ids)
		}}
	return s
}

// Operations are every operation of every product, as the edges declare them where they serve
// them: REST's routes, then the flight schema's @api fields and entities.
func Operations() []flightgraph.Operation {
	return append(rest.Operations(), graph.Operations()...)
}
