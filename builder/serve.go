package builder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/robfig/cron/v3"

	"github.com/trainingco/catalogue/builder/doctor"
	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/config"
)

// ServeOptions tune Serve.
type ServeOptions struct {
	// Logger receives one JSON line per run; nil means slog.Default().
	Logger *slog.Logger
	// AfterRun, when set, is called after every run with its outcome (tests watch it).
	AfterRun func(publish.Result, error)
	// Now is the clock of the builds; nil means time.Now.
	Now func() time.Time
	// Metrics receive serve's measurements; nil means they are kept nowhere.
	Metrics *Metrics
	// Progress, when set, is told about each phase of every build (tests stop builds at
	// chosen moments through it).
	Progress func(publish.Progress)
	// Resolver resolves webhook endpoints' names (tests); nil: the system's.
	Resolver webhook.Resolver
	// webhookRetry is how long serve waits before it tries again to start its webhooks;
	// 0 means webhookRetry (tests make it shorter).
	webhookRetry time.Duration
	// announceTimeout bounds the queueing of a publication's message; 0 means
	// announceTimeout (tests make it shorter).
	announceTimeout time.Duration
}

// midnight is when a new day starts in the configured time zone: upcoming classes and
// can_register move with it, so everything is rendered again.
const midnight = "0 0 * * *"

// startWait is how long serve waits for its listener's first connection before it builds
// anyway: that connection's build is the build at start, but a primary that refuses LISTEN,
// or another builder holding the listener's lease, must not leave serve without one.
const startWait = 2 * time.Second

// Serve builds once at start, then on cfg.Builder.Schedule and at midnight (in cfg's time
// zone), and, with builder.listen, after every change committed on the primary, until ctx
// is cancelled. Builds never overlap: whatever is asked for during a build is gathered into
// the next one. A change builds only the documents it affects (see buildchanges.go); a failed
// build is logged and retried with backoff (see loop). When ctx is cancelled Serve stops
// scheduling, waits for the build in progress, which the cancellation interrupts before its
// pointer is written if it has not been yet, and returns nil.
func Serve(ctx context.Context, cfg config.Config, opts ServeOptions) error {
	s, err := newServeLoop(cfg, opts)
	if err != nil {
		return err
	}
	listening := cfg.Builder.Listen && cfg.Database.URL != ""
	s.log.Info("builder serve starting", "config", cfg.Redacted(), "schedule", cfg.Builder.Schedule, "listen", listening)
	if cfg.Builder.Listen && !listening {
		s.log.Warn("builder.listen is on but database.url is not set: changes are published on the schedule only")
	}
	var w *webhooks
	var werr error // when set, starting the webhooks is tried again
	if cfg.Database.URL == "" {
		s.log.Info("webhooks are off: database.url is not set (their queue is in the primary)")
	} else if w, werr = s.startWebhooks(ctx); errors.Is(werr, errWebhookConfig) {
		return werr
	} else if werr != nil {
		s.webhooksOff(werr)
	}
	s.webhooks.Store(w)
	q := &freshness.Queue{Quiet: cfg.Builder.Debounce, MaxDelay: cfg.Builder.MaxDelay}
	c, err := s.schedule(q)
	if err != nil {
		return err
	}
	var bg sync.WaitGroup
	if werr != nil {
		bg.Go(func() { s.retryWebhooks(ctx, werr) })
	}
	if listening {
		connected := make(chan struct{})
		bg.Go(func() { s.warnTriggers(ctx) })
		bg.Go(func() { s.listen(ctx, q, connected) })
		bg.Go(func() {
			select {
			case <-connected: // its build is the build at start
			case <-time.After(startWait):
				q.Full(snapshot.TriggerStart, 0)
			case <-ctx.Done():
			}
		})
	} else {
		q.Full(snapshot.TriggerStart, 0)
	}
	c.Start()
	var loop sync.WaitGroup
	loop.Go(func() { s.loop(ctx, q) })
	<-ctx.Done()
	s.log.Info("builder serve stopping: waiting for the run in progress")
	<-c.Stop().Done()
	loop.Wait()
	bg.Wait()
	if w := s.webhooks.Load(); w != nil {
		w.stop(ctx, cfg.Webhooks.Timeout)
	}
	s.log.Info("builder serve stopped")
	return nil
}

// warnTriggers logs each change trigger builder.listen needs that the primary lacks or
// has disabled (builder migrate run with --listen false, a trigger dropped since), which
// builder doctor fails on: serve would listen and hear nothing of that table, its changes
// waiting for the schedule.
func (s *serveLoop) warnTriggers(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.cfg.Database.URL)
	if err != nil {
		return // the listener says the primary cannot be reached
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, c := range doctor.MissingTriggers(ctx, conn) {
		s.log.Warn("a change trigger builder.listen needs is missing on the primary: changes it would announce wait for the schedule",
			"check", c.Name, "detail", c.Detail, "fix", c.Fix)
	}
}

// schedule returns the cron that asks q for the scheduled and the midnight builds.
func (s *serveLoop) schedule(q *freshness.Queue) (*cron.Cron, error) {
	sched, err := cron.ParseStandard(s.cfg.Builder.Schedule)
	if err != nil {
		return nil, fmt.Errorf("builder.schedule: %w", err)
	}
	day, err := cron.ParseStandard(midnight)
	if err != nil {
		return nil, err
	}
	c := cron.New(cron.WithLocation(s.cfg.Location()), cron.WithLogger(cronLogger{s.log}))
	c.Schedule(sched, cron.FuncJob(func() { q.Full(snapshot.TriggerSchedule, 0) }))
	c.Schedule(day, cron.FuncJob(func() { q.Full(snapshot.TriggerMidnight, 0) }))
	return c, nil
}

// listen feeds q with what the primary notifies until ctx is done. The first connection
// closes connected and asks for the build at start; every later one asks for a full build,
// since notifications sent while disconnected are lost.
func (s *serveLoop) listen(ctx context.Context, q *freshness.Queue, connected chan struct{}) {
	var first sync.Once
	var leaseLogged bool
	var lastErr string // the failure logged last: one that lasts is logged once
	_ = freshness.Listen(ctx, freshness.ListenOptions{
		URL: s.cfg.Database.URL,
		Connected: func(lsn freshness.LSN) {
			s.metrics.connects.Inc()
			s.metrics.listening.Set(1)
			trigger := snapshot.TriggerListen
			first.Do(func() { trigger = snapshot.TriggerStart; close(connected) })
			leaseLogged, lastErr = false, ""
			s.log.Info("listening for changes on the primary", "channel", freshness.Channel, "wal", lsn.String())
			q.Full(trigger, lsn)
		},
		Notified: func(payload string, lsn freshness.LSN, at time.Time) {
			s.metrics.notifications.Inc()
			if err := q.Change(snapshot.TriggerChange, payload, lsn, at); err != nil {
				s.log.Warn("a change notification could not be read; the next build renders everything", "error", err.Error())
			}
		},
		LogError: func(err error) {
			// Every error is a connection that failed, was lost, did not get the lease or
			// was closed after a handler's error (freshness.closeOn): none listens until
			// Connected says so again.
			s.metrics.listening.Set(0)
			switch {
			case ctx.Err() != nil:
			case errors.Is(err, freshness.ErrLeaseHeld):
				if !leaseLogged {
					s.log.Info("another builder serve listens for changes; this one builds on the schedule and takes over if it stops")
					leaseLogged = true
				}
			case err.Error() != lastErr:
				lastErr = err.Error()
				s.log.Warn("listening for changes: reconnecting; until then changes are published on the schedule", "error", lastErr)
			}
		},
	})
}

// Backoff of the retries of a failed build: the first after retryFirst, each later one
// after twice the wait before, at most retryMax.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

// loop runs one build per batch until ctx is done. A failed build is retried, in full, with
// backoff, until one succeeds: a change committed while the store or the replica is down is
// published within retryMax of its return rather than at the next scheduled build. A build
// that read the replica before it had replayed the batch's changes (builder.replica_wait
// passed) published without them: its batch is built again, every id of it, with the same
// backoff, until a build finds the replica caught up. What is asked for during the wait is
// gathered into the retry. A build the publish guard refused is not retried: building the
// same catalogue again gives the same answer. Nor is a build interrupted by shutdown.
func (s *serveLoop) loop(ctx context.Context, q *freshness.Queue) {
	var wait time.Duration
	for {
		b, ok := q.Next(ctx)
		if !ok || ctx.Err() != nil {
			return // stopping: a build due now must not start
		}
		o := s.build(ctx, b)
		if ctx.Err() != nil {
			return // stopping: the build was interrupted, not failed, and report said so
		}
		retry, why := buildAgain(b, o)
		if why == "" {
			wait = 0
			continue
		}
		wait = min(max(2*wait, retryFirst), retryMax)
		s.log.Info(why, "in", wait.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		q.Again(retry, snapshot.TriggerRetry)
	}
}

// buildAgain returns the batch to build again after b's build, whose outcome is o, and the
// message that says so; "" when b is done.
func buildAgain(b freshness.Batch, o outcome) (freshness.Batch, string) {
	switch {
	case errors.Is(o.err, publish.ErrShrink):
		return freshness.Batch{}, ""
	case o.err != nil && !errors.Is(o.err, publish.ErrCollect):
		// In full: the failure forgot the last publication. A build that also missed the
		// replica's replay waits for it again.
		retry := freshness.Batch{Full: true}
		if !o.caughtUp {
			retry.LSN = b.LSN
		}
		return retry, "retrying the failed build"
	case !o.caughtUp:
		return b, "building again the changes the replica had not replayed"
	}
	return freshness.Batch{}, ""
}

// cronLogger sends cron's messages to slog.
type cronLogger struct{ log *slog.Logger }

// Info logs cron's messages, which repeat at every tick, at debug level.
func (l cronLogger) Info(msg string, keysAndValues ...any) {
	l.log.Debug("cron: "+msg, keysAndValues...)
}

// Error logs cron's errors.
func (l cronLogger) Error(err error, msg string, keysAndValues ...any) {
	l.log.Error("cron: "+msg, append(keysAndValues, "error", err.Error())...)
}
