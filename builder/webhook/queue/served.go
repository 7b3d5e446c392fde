package queue

import (
	"context"
	"time"
)

// Served says whether the edges serve a snapshot (D42): a delivery waits until they do.
type Served interface {
	// Serves reports whether every edge serves snapshot, published at published, or a
	// later one.
	Serves(ctx context.Context, snapshot string, published time.Time) (bool, error)
}
