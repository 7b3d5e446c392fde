package builder

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
)

// Status returns the current snapshot and the kept ones. It only reads the store.
func Status(ctx context.Context, cfg config.Config) (publish.Status, error) {
	st, err := store.Open(ctx, store.Options(cfg.Store))
	if err != nil {
		return publish.Status{}, fmt.Errorf("open store: %w", err)
	}
	return newPublisher(cfg, st, nil, nil).Status(ctx)
}

// Rollback serves the documents of the kept snapshot id again (an empty id: the ones before
// the current) as a new snapshot, announced in the feeds with new change numbers (D39), and
// returns its publication (publish.Publisher.Rollback); one that changed served documents
// queues its webhooks too. It takes the builder lock first when a database is configured, so
// that it cannot race a publication whose collection might delete the snapshot it rolls
// back to; waiting is called once if it has to wait.
func Rollback(ctx context.Context, cfg config.Config, id string, waiting func()) (publish.Result, error) {
	var held func(context.Context) error
	if dbURL, err := primaryURL(cfg); err == nil {
		l, err := acquire(ctx, dbURL, waiting)
		if err != nil {
			return publish.Result{}, err
		}
		defer l.release()
		held = l.held
	}
	st, err := store.Open(ctx, store.Options(cfg.Store))
	if err != nil {
		return publish.Result{}, fmt.Errorf("open store: %w", err)
	}
	p := newPublisher(cfg, st, nil, nil)
	p.CheckLock = held
	res, err := p.Rollback(ctx, id)
	return res, announcePublished(ctx, cfg, res, err)
}

// ErrAnnounce is wrapped by the error of a publication (builder run, a rollback) that is
// published but whose webhooks could not be queued: partners following the feeds still
// read its changes.
var ErrAnnounce = errors.New("its webhooks could not be queued")

// announcePublished queues the catalogue.changed of a publication made outside builder
// serve (builder run, a rollback), as builder serve does after its builds, and returns err
// (the publication's), or the failure to queue it. A publication that builder serve did
// not make is never announced otherwise: serve's next build finds nothing new.
func announcePublished(ctx context.Context, cfg config.Config, res publish.Result, err error) error {
	if res.SnapshotID == "" || (err != nil && !errors.Is(err, publish.ErrCollect)) {
		return err
	}
	if qerr := queueChanged(ctx, cfg, res); qerr != nil {
		return fmt.Errorf("snapshot %s is published, but %w: %w", res.SnapshotID, ErrAnnounce, qerr)
	}
	return err
}

// queueChanged queues the catalogue.changed of a publication that changed served documents
// (D41); builder serve delivers it once the edges serve the snapshot (D42). Webhooks live on
// database.url: without it, or without their tables, there is no endpoint to announce to.
func queueChanged(ctx context.Context, cfg config.Config, res publish.Result) error {
	if cfg.Database.URL == "" || !res.Changed() {
		return nil
	}
	pool, err := pgxpool.New(ctx, cfg.Database.URL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if ok, err := webhookTables(ctx, pool); err != nil || !ok {
		return err
	}
	q, err := queue.New(queue.Options{Pool: pool, Config: cfg.Webhooks, Edge: cfg.Edge}, false)
	if err != nil {
		return err
	}
	_, err = q.Enqueue(ctx, queue.Change{Snapshot: res.SnapshotID, Courses: res.Feed.Courses, Classes: res.Feed.Classes, After: res.Feed.After, Last: res.FeedLast()})
	return err
}
