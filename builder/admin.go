package builder

import (
	"context"
	"fmt"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/store"
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
// returns its publication (publish.Publisher.Rollback). It takes the builder lock first when a database is
// configured, so that it cannot race a publication whose collection might delete the
// snapshot it rolls back to; waiting is called once if it has to wait.
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
	return p.Rollback(ctx, id)
}
