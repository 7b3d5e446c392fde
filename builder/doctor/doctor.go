// Package doctor checks an installation before anything is published: the provider's
// database as the catalogue maps it (columns, types, values, the indexes its queries need,
// the change triggers, the API tokens), the replica, the store, Redis and the time zone.
// Every check is one line, passed or failed, and a failed one says what to do. It reads,
// but for two marks it leaves no trace of: a probe object it writes to the store and
// deletes, and an empty transaction it commits on the primary to time the replica.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/templates"
)

// Check is the outcome of one check.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`        // what was found
	Fix    string `json:"fix,omitempty"` // for a failed check: what to do
}

// Options say what to check.
type Options struct {
	PrimaryURL string // database.url
	ReplicaURL string // replica.url; empty: the builder and the edge read the primary
	Store      store.Options
	RedisURL   string // edge.redis_url; empty: not checked
	RedisPass  string // edge.redis_password
	// PublicURL is edge.public_url as the builder has it: the start of the feeds' URLs in
	// webhook messages.
	PublicURL string
	Timezone  string // timezone
	Templates *templates.Set
	// Listen is builder.listen: the change triggers must be installed.
	Listen bool
	// LargeTable is the number of rows from which a sequential scan, or an index read whole
	// to filter it, in one of the queries is flagged; 0 means DefaultLargeTable.
	LargeTable float64
	// ReplicaLag bounds how far behind the primary the replica may be; 0: DefaultReplicaLag.
	ReplicaLag time.Duration
	// Now is the clock the time zone check reads; nil: time.Now.
	Now func() time.Time
}

const (
	// DefaultLargeTable: below it a sequential scan costs about as much as an index lookup.
	DefaultLargeTable = 10000
	// DefaultReplicaLag is the lag builder.replica_wait tolerates by default, halved.
	DefaultReplicaLag = 5 * time.Second
	// connectTimeout bounds each connection, so that an unreachable host fails its check.
	connectTimeout = 5 * time.Second
)

// Report is every check, in the order run.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Run runs every check and returns them all; it never stops at the first failure.
func Run(ctx context.Context, o Options) Report {
	if o.LargeTable == 0 {
		o.LargeTable = DefaultLargeTable
	}
	if o.ReplicaLag == 0 {
		o.ReplicaLag = DefaultReplicaLag
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Templates == nil {
		o.Templates = templates.MustDefault()
	}
	var r Report
	add := func(c ...Check) { r.Checks = append(r.Checks, c...) }
	add(checkTimezone(o))
	conn, c := connect(ctx, "primary", o.PrimaryURL, "database.url")
	add(c)
	if conn != nil {
		add(checkDatabase(ctx, conn, o)...)
		add(checkReplica(ctx, conn, o)...)
		conn.Close(context.WithoutCancel(ctx))
	} else if o.ReplicaURL != "" && o.ReplicaURL != o.PrimaryURL {
		// Its lag cannot be timed without the primary, but whether it answers can.
		r, c := connect(ctx, "replica", o.ReplicaURL, "replica.url")
		if r != nil {
			r.Close(context.WithoutCancel(ctx))
		}
		add(c)
	}
	add(checkStore(ctx, o.Store)...)
	if o.RedisURL != "" {
		add(checkRedis(ctx, o.RedisURL, o.RedisPass))
	}
	r.OK = true
	for _, c := range r.Checks {
		r.OK = r.OK && c.OK
	}
	return r
}

// checkDatabase is every check of the provider's database on the primary.
func checkDatabase(ctx context.Context, conn *pgx.Conn, o Options) []Check {
	cs := checkColumns(ctx, conn)
	columnsOK := true
	for _, c := range cs {
		columnsOK = columnsOK && c.OK
	}
	cs = append(cs, checkTypeValues(ctx, conn))
	if columnsOK {
		cs = append(cs, checkServedValues(ctx, conn), checkLocalDays(ctx, conn), checkPadding(ctx, conn), checkIDs(ctx, conn), checkVisibility(ctx, conn), checkFedTables(ctx, conn))
		cs = append(cs, checkSearched(ctx, conn), checkWatched(ctx, conn))
		cs = append(cs, checkPlans(ctx, conn, o.Templates, o.LargeTable)...)
	} else {
		// The queries would fail on the columns already reported.
		cs = append(cs, Check{Name: "indexes", Detail: "not checked: the columns above are not as the contract needs them",
			Fix: "fix the columns, then run builder doctor again"})
	}
	cs = append(cs, checkTriggers(ctx, conn, o.Listen)...)
	return append(cs, checkTokens(ctx, conn), checkWebhookFeeds(ctx, conn, o.PublicURL))
}

// connect opens a connection to url, bounded by connectTimeout, and says whether it could.
func connect(ctx context.Context, what, url, key string) (*pgx.Conn, Check) {
	c := Check{Name: what + " database"}
	if url == "" {
		c.Detail = key + " is not set"
		c.Fix = "set " + key + " (the provider's PostgreSQL)"
		return nil, c
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		c.Detail = key + " is not a PostgreSQL URL: " + err.Error()
		c.Fix = "write " + key + " as postgres://USER:PASSWORD@HOST:PORT/DATABASE"
		return nil, c
	}
	cfg.ConnectTimeout = connectTimeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		c.Detail = "cannot connect: " + err.Error()
		c.Fix = fmt.Sprintf("check %s (host, port, user, password, database) and that %s:%d accepts connections from here", key, cfg.Host, cfg.Port)
		return nil, c
	}
	var version string
	_ = conn.QueryRow(ctx, "SHOW server_version").Scan(&version)
	c.OK, c.Detail = true, fmt.Sprintf("connected to %s:%d/%s, PostgreSQL %s", cfg.Host, cfg.Port, cfg.Database, version)
	return conn, c
}

// checkTimezone checks that timezone names a zone this machine knows, and says what day it is
// there: "today" of the contract (D1).
func checkTimezone(o Options) Check {
	c := Check{Name: "time zone"}
	loc, err := time.LoadLocation(o.Timezone)
	if err != nil {
		c.Detail = fmt.Sprintf("timezone %q: %v", o.Timezone, err)
		c.Fix = "set timezone to the IANA name of the provider's zone, such as America/Chicago"
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%s: today is %s there", loc, o.Now().In(loc).Format(time.DateOnly))
	return c
}

// WriteText writes one line per check, ✓ or ✗, and under each failed one what to do.
func (r Report) WriteText(w io.Writer) error {
	failed := 0
	for _, c := range r.Checks {
		mark := "✓"
		if !c.OK {
			mark = "✗"
			failed++
		}
		if _, err := fmt.Fprintf(w, "%s %s: %s\n", mark, c.Name, c.Detail); err != nil {
			return err
		}
		if !c.OK && c.Fix != "" {
			if _, err := fmt.Fprintf(w, "    → %s\n", c.Fix); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "%d checks, %d failed\n", len(r.Checks), failed)
	return err
}

// WriteJSON writes the report as one JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
