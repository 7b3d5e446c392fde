package builder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/trainingco/catalogue/builder/publish"
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
}

// Serve builds once at start and then on cfg.Builder.Schedule (in cfg's time zone) until ctx
// is cancelled. Runs never overlap: a run due while one is still going is skipped. A failed
// run is logged and the next one tries again. When ctx is cancelled Serve stops scheduling,
// waits for the run in progress, which the cancellation interrupts before its pointer is
// written if it has not been yet, and returns nil.
func Serve(ctx context.Context, cfg config.Config, opts ServeOptions) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	log := opts.Logger
	sched, err := cron.ParseStandard(cfg.Builder.Schedule)
	if err != nil {
		return fmt.Errorf("builder.schedule: %w", err)
	}
	log.Info("builder serve starting", "config", cfg.Redacted(), "schedule", cfg.Builder.Schedule)

	cl := cronLogger{log}
	c := cron.New(cron.WithLocation(cfg.Location()), cron.WithLogger(cl))
	// The same wrapped job serves the run at start and the scheduled ones, so that
	// SkipIfStillRunning also keeps a slow first run from overlapping the next.
	job := cron.NewChain(cron.SkipIfStillRunning(cl)).Then(cron.FuncJob(func() { runLogged(ctx, cfg, opts) }))
	c.Schedule(sched, job)

	var first sync.WaitGroup
	first.Go(job.Run)
	c.Start()
	<-ctx.Done()
	log.Info("builder serve stopping: waiting for the run in progress")
	<-c.Stop().Done()
	first.Wait()
	log.Info("builder serve stopped")
	return nil
}

// runLogged runs one build and logs its outcome; a failure waits for the next schedule.
func runLogged(ctx context.Context, cfg config.Config, opts ServeOptions) {
	if ctx.Err() != nil {
		return // stopping: a run due now must not start
	}
	log := opts.Logger
	res, err := Run(ctx, cfg, RunOptions{Logger: log, Now: opts.Now})
	switch {
	case errors.Is(err, publish.ErrCollect):
		log.Warn("published snapshot, but collecting old ones failed; the next run tries again",
			"snapshot", res.SnapshotID, "error", err.Error())
	case err != nil && ctx.Err() != nil:
		log.Info("build interrupted by shutdown; nothing was published", "error", err.Error())
	case err != nil:
		log.Error("build failed; the next scheduled run tries again", "error", err.Error())
	default:
		log.Info("published snapshot", "snapshot", res.SnapshotID, "documents", res.Documents,
			"objects_stored", res.ObjectsStored, "bytes_stored", res.BytesStored,
			"snapshots_collected", res.Collected, "seconds", res.Duration.Seconds())
	}
	if opts.AfterRun != nil {
		opts.AfterRun(res, err)
	}
}

// cronLogger sends cron's messages to slog.
type cronLogger struct{ log *slog.Logger }

// Info logs a skipped run at info level and cron's other messages, which repeat at every
// tick, at debug level.
func (l cronLogger) Info(msg string, keysAndValues ...any) {
	if msg == "skip" {
		l.log.Info("a scheduled build is skipped: the previous one is still running")
		return
	}
	l.log.Debug("cron: "+msg, keysAndValues...)
}

// Error logs cron's errors.
func (l cronLogger) Error(err error, msg string, keysAndValues ...any) {
	l.log.Error("cron: "+msg, append(keysAndValues, "error", err.Error())...)
}
