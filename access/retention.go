package access

import (
	"context"
	"log/slog"
	"time"

	"github.com/flightgraph/flightgraph"
)

// DefaultMailRetention is how long what is left of a delivered or given-up message (its
// flightgraph.MailTrace) stays in the outbox.
const DefaultMailRetention = 72 * time.Hour

// Sweeper deletes what the outbox and the sign-ups no longer need: the messages delivered more
// than Retention ago (and the given-up ones created that long ago), and the pending sign-ups that
// expired. Its deletions are plain DELETE … WHERE statements, so replicas that sweep at the same
// time delete each row once and never wait for each other for long.
type Sweeper struct {
	Mail   flightgraph.MailStore
	Access flightgraph.AccessStore
	// Retention is how long a message is kept once delivered (DefaultMailRetention when not
	// positive).
	Retention time.Duration
	Now       func() time.Time // default time.Now
	Log       *slog.Logger     // default slog.Default()
}

// Sweep deletes once what is due and returns how many messages and sign-ups it deleted. The two
// deletions are apart: the first's failure stops the second, and neither undoes the other.
func (s *Sweeper) Sweep(ctx context.Context) (mails, signUps int64, err error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	at := now()
	if mails, err = s.Mail.DeleteDoneMail(ctx, at.Add(-s.retention())); err != nil {
		return 0, 0, err
	}
	err = s.Access.InTx(ctx, func(tx flightgraph.AccessTx) error {
		signUps, err = tx.DeleteExpiredSignUps(ctx, at)
		return err
	})
	return mails, signUps, err
}

// Run sweeps at once and then every interval until ctx is done; when every is not positive, a
// quarter of the retention, between a minute and an hour, so that nothing outstays the retention
// by more than a quarter of it (or an hour). It logs
// how many rows each sweep deleted, never what they held; a failed sweep is logged, and the next
// one tries again.
func (s *Sweeper) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = min(max(s.retention()/4, time.Minute), time.Hour)
	}
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		mails, signUps, err := s.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "sweep the outbox and sign-ups", "mails", mails, "err", err)
		case mails+signUps > 0:
			log.InfoContext(ctx, "swept the outbox and sign-ups", "mails", mails, "signUps", signUps)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Sweeper) retention() time.Duration {
	if s.Retention <= 0 {
		return DefaultMailRetention
	}
	return s.Retention
}
