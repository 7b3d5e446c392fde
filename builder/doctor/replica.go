package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/freshness"
)

// checkReplica checks that the replica answers, replays the primary's log within
// o.ReplicaLag (replicaLag) and reads the mapping (replicaReads).
func checkReplica(ctx context.Context, primary *pgx.Conn, o Options) []Check {
	if o.ReplicaURL == "" || o.ReplicaURL == o.PrimaryURL {
		return []Check{{Name: "replica database", OK: true, Detail: "replica.url is not set: the builder and the edge read the primary"}}
	}
	conn, c := connect(ctx, "replica", o.ReplicaURL, "replica.url")
	if conn == nil {
		return []Check{c}
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return []Check{replicaLag(ctx, primary, conn, o), replicaReads(ctx, conn)}
}

// replicaReads checks that replica.url's role reads every name of the mapping there, as the
// builder does: every other check of the mapping runs on the primary, so a role without
// SELECT on a view, or a logical replica (which does not copy the views builder migrate
// made on the primary), passed them all and failed the first build.
func replicaReads(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "mapping on the replica"}
	var bad []string
	for _, rel := range contract {
		if _, err := conn.Exec(ctx, "SELECT * FROM "+pgx.Identifier{rel.name}.Sanitize()+" LIMIT 0"); err != nil {
			bad = append(bad, rel.name+": "+err.Error())
		}
	}
	if len(bad) > 0 {
		c.Detail = "replica.url cannot read " + strings.Join(bad, "; ")
		c.Fix = "on a streaming standby, GRANT SELECT on the catalogue_* views to replica.url's role (on the primary); " +
			"a logical replica does not copy views: run builder migrate on it too, or point replica.url at a standby"
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("replica.url's role reads the %d names of the mapping", len(contract))
	return c
}

// replicaLag checks that the replica replays the primary's log within o.ReplicaLag: it
// reads the primary's position, then waits for the replica to pass it.
func replicaLag(ctx context.Context, primary, conn *pgx.Conn, o Options) Check {
	c := Check{Name: "replica lag"}
	// A transaction with an xid writes a commit record, which PostgreSQL flushes (at once,
	// or within wal_writer_delay under synchronous_commit = off) and so streams; the
	// replica has caught up with this moment once it has replayed past the position read
	// before it. Without the commit, records inserted last (hint bits) can sit unflushed for
	// seconds on an idle primary, which is not lag.
	lsn, _, err := markWAL(ctx, primary)
	if err != nil {
		c.Detail = "cannot read the primary's WAL position: " + err.Error()
		return c
	}
	began := time.Now()
	caught, replayed, err := freshness.WaitReplayOn(ctx, conn, lsn+1, o.ReplicaLag) // past lsn
	switch {
	case err != nil:
		c.Detail = err.Error()
	case caught && replayed == 0:
		return notStandby(ctx, primary, conn, c)
	case caught:
		c.OK, c.Detail = true, fmt.Sprintf("replayed the primary's position within %v", time.Since(began).Round(time.Millisecond))
	default:
		c.Detail = fmt.Sprintf("the replica has not replayed past the primary's position %s within %v (it is at %s)", lsn, o.ReplicaLag, replayed)
		c.Fix = "check the replication (pg_stat_replication on the primary); builds wait up to builder.replica_wait for it"
	}
	return c
}

// notStandby checks a replica.url that replays nothing: the primary under another URL is
// read as it is, and always up to date; any other database (a logical replica, a copy) is
// read at once after a change it may not have received yet, which is then published only by
// the next build (config/OPERATIONS.md: the replica must be a physical streaming standby).
// One server and one database: the postmaster's start time and the database's oid agree.
func notStandby(ctx context.Context, primary, conn *pgx.Conn, c Check) Check {
	const which = "SELECT pg_postmaster_start_time()::text || '/' || oid::text FROM pg_database WHERE datname = current_database()"
	var p, r string
	if err := primary.QueryRow(ctx, which).Scan(&p); err != nil {
		c.Detail = "cannot tell the primary's server: " + err.Error()
		return c
	}
	if err := conn.QueryRow(ctx, which).Scan(&r); err != nil {
		c.Detail = "cannot tell replica.url's server: " + err.Error()
		return c
	}
	if p == r {
		c.OK, c.Detail = true, "replica.url is the primary's database under another URL: it is read as it is"
		return c
	}
	c.Detail = "replica.url is neither a standby (it replays nothing) nor the primary's database: a build told of a change reads it at once, " +
		"before a logical replica or a copy has the change, which then waits for the next build"
	c.Fix = "point replica.url at a physical streaming standby of database.url (config/OPERATIONS.md), or leave it empty to read the primary"
	return c
}

// markWAL commits a transaction that writes only its commit record and returns the WAL
// position before it, and the transaction's id, "" when it took none (and so wrote no
// commit record): read in the statement that reads the position, after the one that takes
// it.
func markWAL(ctx context.Context, primary *pgx.Conn) (freshness.LSN, string, error) {
	tx, err := primary.Begin(ctx)
	if err != nil {
		return 0, "", err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	// The xid in a statement of its own: as an unused column of a subquery, the planner
	// dropped pg_current_xact_id(), and the transaction wrote no commit record.
	if _, err := tx.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		return 0, "", err
	}
	var s string
	var xid *string
	if err := tx.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text, pg_current_xact_id_if_assigned()::text").Scan(&s, &xid); err != nil {
		return 0, "", err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, "", err
	}
	lsn, err := freshness.ParseLSN(s)
	if xid == nil {
		return lsn, "", err
	}
	return lsn, *xid, err
}
