package access

import (
	"context"
	"errors"

	"github.com/flightgraph/flightgraph"
)

// Follow keeps the guard's cache in step with the changes other processes commit, told by
// g.Changes, until ctx is done; without Changes it returns at once.
//
// A revocation, approval, plan change, secret rotation or deleted application committed by any
// replica then drops what every replica cached of the key at once, and a token family revoked
// for refresh token reuse drops its tokens; the cache's lifetime (CacheTTL) only bounds what a
// lost notification could leave behind. The guard fails safe: while the feed is down (before it
// first listens, and whenever its connection is lost or stops answering) it does not serve from
// its cache but reads the store on every call, and when the feed listens again it drops
// everything, since changes committed meanwhile went unheard.
func (g *Guard) Follow(ctx context.Context) error {
	if g.Changes == nil {
		return nil
	}
	return g.Changes.Watch(ctx, cacheWatcher{g})
}

// cacheWatcher is the guard's side of its access feed.
type cacheWatcher struct{ g *Guard }

func (w cacheWatcher) AccessChanged(c flightgraph.AccessChange) {
	if c.KeyID != "" {
		w.g.Forget(c.KeyID)
	}
	if c.FamilyID != "" {
		w.g.ForgetFamily(c.FamilyID)
	}
}

func (w cacheWatcher) AccessFeedUp() {
	w.g.forgetAll()
	w.g.feedUp.Store(true)
	if w.g.Log != nil {
		w.g.Log.Info("access: the access feed listens; keys and tokens are cached again")
	}
}

func (w cacheWatcher) AccessFeedDown(err error) {
	w.g.feedUp.Store(false)
	w.g.forgetAll()
	switch {
	case w.g.Log == nil:
	case errors.Is(err, context.Canceled):
		// The server stops: no outage to warn of.
		w.g.Log.Info("access: the access feed stopped; keys and tokens are read from the store on every call", "err", err)
	default:
		w.g.Log.Warn("access: the access feed is down; keys and tokens are read from the store on every call until it is back", "err", err)
	}
}
