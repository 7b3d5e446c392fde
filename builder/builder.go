// Package builder builds and publishes the catalogue: it reads the replica in one
// consistent transaction through the SQL in templates/, renders every static document
// (package catalogue) and publishes them as one snapshot (package publish). Run does it
// once; Serve does it on a cron schedule. A PostgreSQL advisory lock makes sure only one
// builder publishes at a time, so several hosts can run the same schedule.
package builder

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/catalogue"
	"github.com/trainingco/catalogue/builder/doctor"
	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

// Phases of a run before publication; publish reports the ones after.
const (
	PhaseWaiting   = "waiting for another builder"
	PhaseReading   = "reading the database"
	PhaseRendering = "rendering documents"
)

// RunOptions tune one build.
type RunOptions struct {
	// Force publishes even when the publish guard (builder.max_shrink) would refuse.
	Force bool
	// Progress, when set, is told about each phase; calls are serialised.
	Progress func(publish.Progress)
	// Waiting, when set, is called once if another builder holds the lock; otherwise the
	// wait is logged.
	Waiting func()
	// Logger receives the run's messages; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Run builds the catalogue once and publishes it as a new snapshot. It waits for any other
// builder to finish first; the result's Duration counts from the moment it holds the lock.
// A publication that changed served documents queues its catalogue.changed (D41), which
// builder serve delivers. On error nothing was published, except for an error wrapping
// publish.ErrCollect or ErrAnnounce, which comes with the result of the publication.
func Run(ctx context.Context, cfg config.Config, opts RunOptions) (publish.Result, error) {
	opts = opts.withDefaults()
	tpl, err := templates.Load(cfg.Templates.Dir)
	if err != nil {
		return publish.Result{}, err
	}
	dbURL, err := primaryURL(cfg)
	if err != nil {
		return publish.Result{}, err
	}
	l, err := acquire(ctx, dbURL, func() {
		opts.report(publish.Progress{Phase: PhaseWaiting})
		opts.Waiting()
	})
	if err != nil {
		return publish.Result{}, err
	}
	defer l.release()
	began := time.Now()
	res, err := buildAndPublish(ctx, cfg, tpl, opts, l.held)
	if res.SnapshotID != "" {
		res.Duration = time.Since(began)
	}
	return res, announcePublished(ctx, cfg, res, err)
}

// buildAndPublish is Run once it holds the lock; held checks that it still does.
func buildAndPublish(ctx context.Context, cfg config.Config, tpl *templates.Set, opts RunOptions, held func(context.Context) error) (publish.Result, error) {
	st, err := openStore(ctx, cfg.Store, nil)
	if err != nil {
		return publish.Result{}, err
	}
	p := newPublisher(cfg, st, opts.Progress, opts.Now)
	p.CheckLock = held
	res, _, err := buildAll(ctx, cfg, tpl, p, opts, snapshot.Build{Trigger: snapshot.TriggerRun})
	return res, err
}

// buildAll renders every document and publishes them through p. It returns, with the
// result, the state of the catalogue that a later partial build starts from.
func buildAll(ctx context.Context, cfg config.Config, tpl *templates.Set, p *publish.Publisher, opts RunOptions, b snapshot.Build) (publish.Result, *catalogue.State, error) {
	// The current manifest (about 11 MB at 100,000 documents) is read while the database is:
	// the two do not depend on each other.
	var cur *snapshot.Manifest
	var curErr error
	var reading sync.WaitGroup
	reading.Go(func() { cur, curErr = p.Current(ctx) })
	today := cfg.Today(opts.Now())
	rendered, err := build(ctx, cfg.ReplicaURL(), tpl, today, opts)
	reading.Wait()
	if err != nil {
		return publish.Result{}, nil, err
	}
	if curErr != nil {
		return publish.Result{}, nil, curErr
	}
	meta := publish.Meta{Today: today.Format(time.DateOnly), Timezone: cfg.Timezone, Counts: rendered.Counts, Build: b}
	res, err := p.PublishOver(ctx, cur, rendered.Docs, meta, opts.Force)
	return res, rendered.State, err
}

// build reads the replica and renders every document for today.
func build(ctx context.Context, replicaURL string, tpl *templates.Set, today time.Time, opts RunOptions) (*catalogue.Rendered, error) {
	opts.report(publish.Progress{Phase: PhaseReading})
	var data *catalogue.Data
	err := readTx(ctx, replicaURL, func(tx pgx.Tx) (err error) {
		data, err = catalogue.Read(ctx, tx, tpl)
		return err
	})
	if err != nil {
		return nil, err
	}
	opts.report(publish.Progress{Phase: PhaseRendering})
	rendered, err := catalogue.Render(data, today)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	rendered.Counts.Documents = len(rendered.Docs)
	opts.report(publish.Progress{Phase: PhaseRendering, Done: len(rendered.Docs), Total: len(rendered.Docs)})
	return rendered, nil
}

// readTx runs read in one read-only REPEATABLE READ transaction on the replica, so that
// every document of the snapshot comes from the same state of the database. It refuses a
// mapping whose views builder doctor fails on (doctor.CheckContract): a build would read
// them wrongly (a timestamptz start_date as its UTC date) or fail on a scan.
func readTx(ctx context.Context, replicaURL string, read func(pgx.Tx) error) error {
	conn, err := pgx.Connect(ctx, replicaURL)
	if err != nil {
		return fmt.Errorf("connect to the replica: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := doctor.CheckContract(ctx, conn); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op after Commit
	if err := read(tx); err != nil {
		return fmt.Errorf("read the catalogue: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("end read: %w", err)
	}
	return nil
}

// openStore opens the store and creates its bucket or folder when it does not exist yet.
func openStore(ctx context.Context, cfg config.Store, observe func(error)) (store.Store, error) {
	st, err := store.Open(ctx, store.Options(cfg))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if observe != nil {
		st = store.Observe(st, observe)
	}
	if err := st.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("prepare store %s: %w", st, err)
	}
	return st, nil
}

func newPublisher(cfg config.Config, st store.Store, progress func(publish.Progress), now func() time.Time) *publish.Publisher {
	return &publish.Publisher{Store: st, Keep: cfg.Builder.Keep, MaxShrink: cfg.Builder.MaxShrink,
		Grace: cfg.Builder.CollectGrace, Retention: cfg.Feeds.Retention, Progress: progress, Now: now}
}

func (o RunOptions) withDefaults() RunOptions {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Waiting == nil {
		log := o.Logger
		o.Waiting = func() { log.Info("waiting for another builder…") }
	}
	return o
}

func (o RunOptions) report(p publish.Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}
