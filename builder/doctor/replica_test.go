package doctor

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestMarkWALWritesPastIt: markWAL's own transaction takes an id and commits, and so writes
// a commit record after the position it returns (read before the commit), which a replica
// that replays all the primary wrote passes. The planner dropped the unused
// pg_current_xact_id() of the subquery, the transaction had no xid and wrote nothing, and
// on an idle primary the replica check failed a standby that had replayed everything ("has
// not replayed the primary's position 0/3531470 within 5s (it is at 0/3531470)"; an
// operator's review). The primary's flush position, which this test read before, proves
// nothing on a server other tests write to: theirs moves it past markWAL's too.
func TestMarkWALWritesPastIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testkit.NewMigratedDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var s string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&s); err != nil {
		t.Fatal(err)
	}
	before, err := freshness.ParseLSN(s)
	if err != nil {
		t.Fatal(err)
	}
	lsn, xid, err := markWAL(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if lsn < before {
		t.Errorf("markWAL returned %s, before the position %s read before it", lsn, before)
	}
	if xid == "" {
		t.Fatalf("markWAL's transaction took no id: it wrote no commit record past %s", lsn)
	}
	// A committed transaction with an id has written its commit record, after lsn.
	var status string
	if err := conn.QueryRow(ctx, "SELECT COALESCE(pg_xact_status($1::xid8), 'too old')", xid).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != "committed" {
		t.Errorf("markWAL's transaction %s is %s, want committed", xid, status)
	}
}
