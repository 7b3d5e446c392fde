package doctor

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestMarkWALWritesPastIt: markWAL's transaction writes a commit record after the position
// it returns, flushed when Commit returns, so a replica that replays all the primary wrote
// passes it. The planner dropped the unused pg_current_xact_id() of the subquery, the
// transaction had no xid and wrote nothing, and on an idle primary the replica check failed
// a standby that had replayed everything ("has not replayed the primary's position 0/3531470
// within 5s (it is at 0/3531470)"; an operator's review).
func TestMarkWALWritesPastIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testkit.NewMigratedDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	lsn, err := markWAL(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	flushed := flushedPast(ctx, t, conn, lsn, 5*time.Second)
	if flushed <= lsn {
		t.Errorf("the primary has flushed up to %s, 5s after markWAL returned %s: its transaction wrote nothing past it", flushed, lsn)
	}
}

// flushedPast polls the primary's flush position until it passes lsn or bound passes: under
// synchronous_commit = off (the test services') a commit is flushed within wal_writer_delay.
func flushedPast(ctx context.Context, t *testing.T, conn *pgx.Conn, lsn freshness.LSN, bound time.Duration) freshness.LSN {
	t.Helper()
	for end := time.Now().Add(bound); ; time.Sleep(50 * time.Millisecond) {
		var s string
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&s); err != nil {
			t.Fatal(err)
		}
		flushed, err := freshness.ParseLSN(s)
		if err != nil {
			t.Fatal(err)
		}
		if flushed > lsn || time.Now().After(end) {
			return flushed
		}
	}
}
