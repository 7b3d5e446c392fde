package freshness

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/templates"
)

// replayPoll bounds the interval between two looks at the replica's replay position. A
// streaming standby replays a commit within milliseconds, so the first looks come quickly.
const replayPoll = 50 * time.Millisecond

// WaitReplay waits until the replica at replicaURL has replayed the primary's log up to lsn,
// at most bound. It reports whether it has (a database that is not a standby always has)
// and the position it saw last.
func WaitReplay(ctx context.Context, replicaURL string, lsn LSN, bound time.Duration) (bool, LSN, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	conn, err := pgx.Connect(ctx, replicaURL)
	if err != nil {
		return false, 0, fmt.Errorf("connect to the replica: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return WaitReplayOn(ctx, conn, lsn, bound)
}

// WaitReplayOn is WaitReplay on a connection to the replica (builder doctor's). A
// database that is not a standby reports true and position 0.
func WaitReplayOn(ctx context.Context, conn *pgx.Conn, lsn LSN, bound time.Duration) (bool, LSN, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	pause := time.Millisecond
	for {
		var s *string
		if err := conn.QueryRow(ctx, embedded().SQL(templates.ReplayLSN)).Scan(&s); err != nil {
			if ctx.Err() != nil {
				return false, 0, nil // the bound passed during the query
			}
			return false, 0, fmt.Errorf("read the replica's replay position: %w", err)
		}
		if s == nil {
			return true, 0, nil // not a standby: it is the primary, or a copy that is not replaying
		}
		replayed, err := ParseLSN(*s)
		if err != nil {
			return false, 0, err
		}
		if replayed >= lsn {
			return true, replayed, nil
		}
		select {
		case <-ctx.Done():
			return false, replayed, nil
		case <-time.After(pause):
		}
		pause = min(2*pause, replayPoll)
	}
}
