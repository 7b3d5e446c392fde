package builder

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/trainingco/catalogue/builder/catalogue"
	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

// serveLoop is builder serve: the loop that answers each batch of freshness.Queue with a
// build (loop), and its state between builds. Only the loop touches it.
type serveLoop struct {
	cfg     config.Config
	opts    ServeOptions
	log     *slog.Logger
	metrics *Metrics
	store   store.Store // opened by the first build
	// last is the snapshot this builder published last, with the state of the catalogue
	// it was built from: a change is built over it. nil makes the next build full.
	last *published
	// own are the manifests of the last builder.keep snapshots this process published,
	// for collection (publish.Publisher.Own).
	own map[string]*snapshot.Manifest
	// kept remembers the hashes of the kept manifests other processes published, which
	// collection read from the store (publish.Publisher.Kept).
	kept publish.KeptHashes
	// webhooks queues and delivers catalogue.changed; nil while off (they start once the
	// primary answers and has their tables, see retryWebhooks).
	webhooks atomic.Pointer[webhooks]
}

// published is a snapshot this builder published.
type published struct {
	manifest *snapshot.Manifest
	state    *catalogue.State
}

func newServeLoop(cfg config.Config, opts ServeOptions) (*serveLoop, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	if _, err := primaryURL(cfg); err != nil {
		return nil, err
	}
	return &serveLoop{cfg: cfg, opts: opts, log: opts.Logger, metrics: opts.Metrics}, nil
}

// outcome is what one build did, for its log line and metrics.
type outcome struct {
	kind       string
	res        publish.Result
	err        error
	waited     time.Duration // for the replica
	caughtUp   bool
	took, cpu  time.Duration
	commitLag  time.Duration // from the batch's first notification to the pointer; 0 without one
	triggerKey string
}

// build answers one batch: it waits for the replica to replay the batch's changes, then
// builds what changed, or everything, and publishes it.
func (s *serveLoop) build(ctx context.Context, b freshness.Batch) outcome {
	o := outcome{caughtUp: true, triggerKey: b.Triggers[0]}
	if b.LSN != 0 {
		o.waited, o.caughtUp = s.waitReplica(ctx, b)
	}
	began, cpu := time.Now(), cpuTime()
	o.kind, o.res, o.err = s.run(ctx, b)
	o.took, o.cpu = time.Since(began), cpuTime()-cpu
	if o.res.SnapshotID != "" && !b.Noticed.IsZero() {
		o.commitLag = time.Since(b.Noticed)
		s.metrics.commitLag.Observe(o.commitLag.Seconds())
	}
	s.metrics.built(o.kind, o.triggerKey, o.res.SnapshotID != "", o.took, o.cpu)
	s.report(ctx, b, o)
	if s.opts.AfterRun != nil {
		s.opts.AfterRun(o.res, o.err)
	}
	return o
}

// waitReplica waits, at most builder.replica_wait, for the replica to replay b's changes.
// When it has not, or cannot tell, the loop builds b again (buildAgain).
func (s *serveLoop) waitReplica(ctx context.Context, b freshness.Batch) (time.Duration, bool) {
	began := time.Now()
	ok, replayed, err := freshness.WaitReplay(ctx, s.cfg.ReplicaURL(), b.LSN, s.cfg.Builder.ReplicaWait)
	waited := time.Since(began)
	s.metrics.replicaWait.Observe(waited.Seconds())
	switch {
	case ctx.Err() != nil:
	case err != nil:
		s.log.Warn("could not check how far the replica has replayed; reading it anyway, and building the changes again until a check finds them replayed", "error", err.Error())
	case !ok:
		s.metrics.replicaTimeout.Inc()
		s.log.Warn("the replica has not replayed the changes within builder.replica_wait; reading it anyway, and building them again until a build finds them replayed",
			"wal_wanted", b.LSN.String(), "wal_replayed", replayed.String(), "waited_seconds", waited.Seconds())
	}
	return waited, ok
}

// run builds b: only what changed when this builder can, everything otherwise. Any failure
// forgets the last publication, so that the next build is a full one: a batch that failed
// is not retried by itself, and a full build covers it.
func (s *serveLoop) run(ctx context.Context, b freshness.Batch) (string, publish.Result, error) {
	kind, res, state, err := s.runLocked(ctx, b)
	s.last = nil
	if (err == nil || errors.Is(err, publish.ErrCollect)) && res.Manifest != nil && state != nil {
		s.last = &published{manifest: res.Manifest, state: state}
	}
	if res.Manifest != nil {
		s.remember(res.Manifest)
	}
	return kind, res, err
}

// remember adds m to the manifests this process published, of which it keeps the newest
// builder.keep (snapshot ids sort in build order).
func (s *serveLoop) remember(m *snapshot.Manifest) {
	if s.own == nil {
		s.own = map[string]*snapshot.Manifest{}
	}
	s.own[m.ID] = m
	ids := slices.Sorted(maps.Keys(s.own))
	for _, id := range ids[:max(0, len(ids)-s.cfg.Builder.Keep)] {
		delete(s.own, id)
	}
}

// publisher returns a publisher into the store for a build holding the lock l.
func (s *serveLoop) publisher(l *lock) *publish.Publisher {
	p := newPublisher(s.cfg, s.store, s.opts.Progress, s.opts.Now)
	p.CheckLock, p.Own, p.Kept = l.held, s.own, &s.kept
	return p
}

func (s *serveLoop) runLocked(ctx context.Context, b freshness.Batch) (string, publish.Result, *catalogue.State, error) {
	tpl, err := templates.Load(s.cfg.Templates.Dir)
	if err != nil {
		return kindFull, publish.Result{}, nil, err
	}
	dbURL, _ := primaryURL(s.cfg) // newServeLoop checked it
	l, err := acquire(ctx, dbURL, func() { s.log.Info("waiting for another builder…") })
	if err != nil {
		return kindFull, publish.Result{}, nil, err
	}
	defer l.release()
	kind, res, state, err := s.buildLocked(ctx, tpl, l, b)
	// Queued before the lock goes, as builder run and rollback do: two builders' messages
	// then queue in the order of their publications, and endpoints get them in that order.
	s.announce(context.WithoutCancel(ctx), res, b.Noticed)
	return kind, res, state, err
}

// buildLocked builds b, holding the lock l: what changed when it can, else everything.
func (s *serveLoop) buildLocked(ctx context.Context, tpl *templates.Set, l *lock, b freshness.Batch) (string, publish.Result, *catalogue.State, error) {
	var err error
	if s.store == nil {
		if s.store, err = openStore(ctx, s.cfg.Store, s.metrics.storeResult); err != nil {
			return kindFull, publish.Result{}, nil, err
		}
	}
	today := s.cfg.Today(s.opts.Now())
	if s.canBuildChanges(ctx, b, today) {
		res, state, err := s.buildChanges(ctx, tpl, s.publisher(l), b, today)
		if err == nil || ctx.Err() != nil || res.SnapshotID != "" || errors.Is(err, publish.ErrShrink) {
			return kindChanges, res, state, err
		}
		s.log.Warn("building only what changed failed; building everything", "error", err.Error())
	}
	opts := RunOptions{Logger: s.log, Now: s.opts.Now, Progress: s.opts.Progress}.withDefaults()
	res, state, err := buildAll(ctx, s.cfg, tpl, s.publisher(l), opts, s.record(b, true))
	return kindFull, res, state, err
}

// canBuildChanges says whether b can be built over the last publication: it holds changes
// only, they are listed, the day is the same, and the snapshot this builder published last
// is still the current one (not replaced by another builder, a builder run or a rollback).
func (s *serveLoop) canBuildChanges(ctx context.Context, b freshness.Batch, today time.Time) bool {
	if b.Full || b.Changes.All() || s.last == nil || !s.last.state.Today().Equal(today) {
		return false
	}
	ptr, err := snapshot.ReadPointer(ctx, s.store)
	if err != nil {
		return false
	}
	if ptr.ID != s.last.manifest.ID {
		s.log.Info("the current snapshot is not the one this builder published last: building everything",
			"current", ptr.ID, "published_last", s.last.manifest.ID)
		return false
	}
	return true
}

// record is the build record of b's build.
func (s *serveLoop) record(b freshness.Batch, full bool) snapshot.Build {
	r := snapshot.Build{Trigger: snapshot.TriggerChange, Notifications: b.Changes.Notifications()}
	if full {
		for _, t := range b.Triggers {
			if t != snapshot.TriggerChange {
				r.Trigger = t
				break
			}
		}
	}
	if !b.Noticed.IsZero() {
		at := b.Noticed.UTC()
		r.NoticedAt = &at
	}
	return r
}

// report logs the outcome of one build.
func (s *serveLoop) report(ctx context.Context, b freshness.Batch, o outcome) {
	res, err := o.res, o.err
	switch {
	case errors.Is(err, publish.ErrCollect):
		s.log.Warn("published snapshot, but collecting old ones failed; the next run tries again",
			"snapshot", res.SnapshotID, "error", err.Error())
	case err != nil && ctx.Err() != nil:
		s.log.Info("build interrupted by shutdown; nothing was published", "error", err.Error())
	case errors.Is(err, publish.ErrShrink):
		s.log.Error("build refused by the publish guard (builder.max_shrink); the next scheduled run tries again, or publish it with builder run --force",
			"error", err.Error(), "kind", o.kind, "triggers", b.Triggers)
	case err != nil:
		s.log.Error("build failed; retrying", "error", err.Error(), "kind", o.kind, "triggers", b.Triggers)
	default:
		attrs := []any{"snapshot", res.SnapshotID, "kind", o.kind, "triggers", b.Triggers,
			"documents", res.Documents, "objects_stored", res.ObjectsStored, "bytes_stored", res.BytesStored,
			"snapshots_collected", res.Collected, "seconds", o.took.Seconds(), "cpu_seconds", o.cpu.Seconds()}
		if m := res.Manifest; m != nil && m.Build != nil {
			attrs = append(attrs, "rendered", m.Build.Rendered, "changed", m.Build.Changed, "removed", m.Build.Removed)
		}
		if b.LSN != 0 {
			attrs = append(attrs, "replica_wait_seconds", o.waited.Seconds(), "replica_caught_up", o.caughtUp)
		}
		if o.commitLag > 0 {
			attrs = append(attrs, "notifications", b.Changes.Notifications(), "commit_to_published_seconds", o.commitLag.Seconds())
		}
		s.log.Info("published snapshot", attrs...)
	}
}
