package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/templates"
)

// query is one of the queries that must not read a whole large table: those that run per
// request on the edge or per change in the builder. The builder's full reads (classes.sql,
// courses.sql, popularity.sql) read every row by design and are not checked.
type query struct {
	name string // the template
	what string // for the message
	args []any  // sample arguments
}

func queries(today time.Time) []query {
	day := today.Format(time.DateOnly)
	ids := []int64{1, 2, 3}
	return []query{
		{templates.Search, "the class search, no filter", []any{day, nil, nil, nil, nil, nil, 25, 0}},
		{templates.Search, "the class search by date", []any{day, nil, nil, day, nil, nil, 25, 0}},
		{templates.Search, "the class search by course", []any{day, nil, nil, nil, nil, int64(1), 25, 0}},
		{templates.SearchPage, "a page of the search index", []any{ids, int64(0)}},
		{templates.Student, "a signed-in student's class read", []any{"1", int64(1), int64(1)}},
		{templates.ChangesClasses, "the classes a change affects", []any{ids, ids, ids, ids}},
		{templates.ClassesByID, "a change's classes", []any{ids}},
		{templates.CoursesByID, "a change's courses", []any{ids}},
		{templates.Upcoming, "a change's upcoming classes", []any{ids, day}},
		{templates.PopularityByID, "a change's popularity", []any{ids}},
	}
}

// checkPlans runs EXPLAIN of each query with sequential scans disabled: a sequential scan
// that remains has no index to use instead, and one of a table of at least large rows
// (as ANALYZE last counted them) is flagged.
func checkPlans(ctx context.Context, conn *pgx.Conn, tpl *templates.Set, large float64) []Check {
	var cs []Check
	for _, q := range queries(time.Now()) {
		cs = append(cs, checkPlan(ctx, conn, tpl, q, large))
	}
	return cs
}

func checkPlan(ctx context.Context, conn *pgx.Conn, tpl *templates.Set, q query, large float64) Check {
	c := Check{Name: "indexes for " + q.what + " (" + q.name + ")"}
	scans, err := seqScans(ctx, conn, tpl.SQL(q.name), q.args)
	if err != nil {
		c.Detail = "EXPLAIN failed: " + err.Error()
		c.Fix = "fix " + q.name + " or the mapping it reads"
		return c
	}
	var big []string
	for _, s := range scans {
		if s.rows >= large {
			big = append(big, fmt.Sprintf("%s (%.0f rows)", s.table, s.rows))
		}
	}
	if len(big) > 0 {
		c.Detail = "sequential scan of " + strings.Join(big, ", ")
		c.Fix = "add an index on the columns " + q.name + " filters and joins these tables on (in mapping.sql; the default one has the reference schema's)"
		return c
	}
	c.OK, c.Detail = true, "no sequential scan of a large table"
	return c
}

// scan is one sequential scan in a plan, with the table's size.
type scan struct {
	table string
	rows  float64
}

// seqScans returns the sequential scans of sql's plan that no index can replace.
func seqScans(ctx context.Context, conn *pgx.Conn, sql string, args []any) ([]scan, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		return nil, err
	}
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON, VERBOSE) "+sql, args...).Scan(&raw); err != nil {
		return nil, err
	}
	var plans []struct{ Plan node }
	if err := json.Unmarshal(raw, &plans); err != nil {
		return nil, fmt.Errorf("read the plan: %w", err)
	}
	var tables []pgx.Identifier
	for _, p := range plans {
		p.Plan.walk(func(n *node) {
			t := pgx.Identifier{n.Schema, n.Relation}
			if n.NodeType == "Seq Scan" && !slices.ContainsFunc(tables, func(u pgx.Identifier) bool { return slices.Equal(t, u) }) {
				tables = append(tables, t)
			}
		})
	}
	out := make([]scan, 0, len(tables))
	for _, t := range tables {
		s, err := tableSize(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// tableSize returns the table t as SQL names it (quoted where it must be, without a schema
// on the search path) and its rows. t is quoted before to_regclass reads it: unquoted, a
// table "Course" would be looked for as course.
func tableSize(ctx context.Context, tx pgx.Tx, t pgx.Identifier) (scan, error) {
	var s scan
	err := tx.QueryRow(ctx, `SELECT oid::regclass::text, reltuples::float8 FROM pg_class WHERE oid = to_regclass($1)`,
		t.Sanitize()).Scan(&s.table, &s.rows)
	if err != nil || s.rows >= 0 {
		return s, err
	}
	// reltuples is -1 for a table never analyzed: count it then (doctor runs once).
	err = tx.QueryRow(ctx, "SELECT count(*)::float8 FROM "+t.Sanitize()).Scan(&s.rows)
	return s, err
}

// node is a node of EXPLAIN's JSON plan, with the fields read here.
type node struct {
	NodeType string `json:"Node Type"`
	Relation string `json:"Relation Name"`
	Schema   string `json:"Schema"`
	Plans    []node `json:"Plans"`
}

func (n *node) walk(f func(*node)) {
	f(n)
	for i := range n.Plans {
		n.Plans[i].walk(f)
	}
}
