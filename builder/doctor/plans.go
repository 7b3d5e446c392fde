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

// checkPlans runs EXPLAIN of each query with sequential scans disabled, and flags the
// tables of at least large rows (as ANALYZE last counted them) that the plan still reads
// whole (wholeScans): with a sequential scan that remains, no index can replace it; with a
// full index scan, the planner took an index for its order or its partial predicate only.
func checkPlans(ctx context.Context, conn *pgx.Conn, tpl *templates.Set, large float64) []Check {
	var cs []Check
	for _, q := range queries(time.Now()) {
		cs = append(cs, checkPlan(ctx, conn, tpl, q, large))
	}
	return cs
}

func checkPlan(ctx context.Context, conn *pgx.Conn, tpl *templates.Set, q query, large float64) Check {
	c := Check{Name: "indexes for " + q.what + " (" + q.name + ")"}
	scans, err := planScans(ctx, conn, tpl.SQL(q.name), q.args)
	if err != nil {
		c.Detail = "EXPLAIN failed: " + err.Error()
		c.Fix = "fix " + q.name + " or the mapping it reads"
		return c
	}
	detail, on := describe(scans, large)
	if detail == "" {
		c.OK, c.Detail = true, "no sequential or full index scan of a large table"
		return c
	}
	c.Detail = detail
	c.Fix = "add an index on what " + q.name + " filters and joins these tables on, in mapping.sql " +
		"(the default one has the reference schema's): " + on
	return c
}

// describe says how the plan reads the scans of at least large rows, and what it filters
// and joins them on; both are empty when there is none.
func describe(scans []scan, large float64) (detail, on string) {
	var seq, full, ons []string
	for _, s := range scans {
		if s.rows < large {
			continue
		}
		at := fmt.Sprintf("%s (%.0f rows)", s.table, s.rows)
		if s.seq {
			seq = append(seq, at)
		}
		if s.full {
			full = append(full, at)
		}
		ons = append(ons, s.on())
	}
	var found []string
	if len(seq) > 0 {
		found = append(found, "sequential scan of "+strings.Join(seq, ", "))
	}
	if len(full) > 0 {
		found = append(found, "full index scan of "+strings.Join(full, ", ")+
			" (no Index Cond: the whole index is read and each row filtered)")
	}
	return strings.Join(found, "; "), strings.Join(ons, "; ")
}

// scan is a table a plan reads whole, with its size and what the plan filters and joins
// it on (terms, without its alias).
type scan struct {
	id               pgx.Identifier // as the plan names it
	aliases          []string
	table            string // as SQL names it (tableSize)
	rows             float64
	seq, full        bool // by a sequential scan, by a full index scan
	filtered, joined []string
}

// on is what the fix names of s: "classes: filtered on start_date, joined on id".
func (s scan) on() string {
	var what []string
	if len(s.filtered) > 0 {
		what = append(what, "filtered on "+strings.Join(s.filtered, ", "))
	}
	if len(s.joined) > 0 {
		what = append(what, "joined on "+strings.Join(s.joined, ", "))
	}
	if len(what) == 0 {
		return s.table
	}
	return s.table + ": " + strings.Join(what, ", ")
}

// planScans returns the tables sql's plan reads whole with sequential scans disabled, and
// their sizes.
func planScans(ctx context.Context, conn *pgx.Conn, sql string, args []any) ([]scan, error) {
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
	roots := make([]node, len(plans))
	for i, p := range plans {
		roots[i] = p.Plan
	}
	scans := wholeScans(roots)
	for i := range scans {
		if scans[i].table, scans[i].rows, err = tableSize(ctx, tx, scans[i].id); err != nil {
			return nil, err
		}
	}
	return scans, nil
}

// wholeScans returns the tables the plans read whole, each once, with what their scans
// filter them on and what the plans' joins join them on.
func wholeScans(plans []node) []scan {
	var out []scan
	var joins []string
	for i := range plans {
		plans[i].walk(func(n *node) {
			joins = append(joins, n.HashCond, n.MergeCond, n.JoinFilter) // "" where none: no terms
			full, ok := n.whole()
			if !ok {
				return
			}
			id := pgx.Identifier{n.Schema, n.Relation}
			at := slices.IndexFunc(out, func(s scan) bool { return slices.Equal(s.id, id) })
			if at < 0 {
				at, out = len(out), append(out, scan{id: id})
			}
			s := &out[at]
			s.aliases = append(s.aliases, n.Alias)
			s.seq, s.full = s.seq || !full, s.full || full
			s.filtered = addNew(s.filtered, terms(n.Filter, n.Alias), terms(n.RecheckCond, n.Alias))
		})
	}
	for i := range out {
		for _, j := range joins {
			for _, a := range out[i].aliases {
				out[i].joined = addNew(out[i].joined, terms(j, a))
			}
		}
	}
	return out
}

// addNew appends to list the strings of each of more that it does not hold.
func addNew(list []string, more ...[]string) []string {
	for _, m := range more {
		for _, s := range m {
			if !slices.Contains(list, s) {
				list = append(list, s)
			}
		}
	}
	return list
}

// tableSize returns the table t as SQL names it (quoted where it must be, without a schema
// on the search path) and its rows. t is quoted before to_regclass reads it: unquoted, a
// table "Course" would be looked for as course.
func tableSize(ctx context.Context, tx pgx.Tx, t pgx.Identifier) (table string, rows float64, err error) {
	err = tx.QueryRow(ctx, `SELECT oid::regclass::text, reltuples::float8 FROM pg_class WHERE oid = to_regclass($1)`,
		t.Sanitize()).Scan(&table, &rows)
	if err != nil || rows >= 0 {
		return table, rows, err
	}
	// reltuples is -1 for a table never analyzed: count it then (doctor runs once).
	err = tx.QueryRow(ctx, "SELECT count(*)::float8 FROM "+t.Sanitize()).Scan(&rows)
	return table, rows, err
}

// node is a node of EXPLAIN's JSON plan, with the fields read here.
type node struct {
	NodeType    string `json:"Node Type"`
	Relation    string `json:"Relation Name"`
	Schema      string `json:"Schema"`
	Alias       string `json:"Alias"`
	IndexCond   string `json:"Index Cond"`
	RecheckCond string `json:"Recheck Cond"`
	Filter      string `json:"Filter"`
	HashCond    string `json:"Hash Cond"`
	MergeCond   string `json:"Merge Cond"`
	JoinFilter  string `json:"Join Filter"`
	Plans       []node `json:"Plans"`
}

// whole says whether n reads its table whole (ok), and whether through an index (full).
// A sequential scan does. An index scan without an Index Cond reads its whole index, but
// is flagged only with a Filter left on it. The reference schema's plans, with 200 classes
// and sequential scans off, read classes_pkey, classes_room_idx and registrations_class_idx
// whole as the input of a join, and its partial index of public classes whole for WHERE
// is_public, all unfiltered: on a small table the planner prefers a whole read to per-row
// lookups, as it would by a sequential scan were those allowed. An unfiltered walk of an
// index for its order under a LIMIT reads no more than the LIMIT. A Filter left on such a
// scan is a condition of the query that no index key serves (a date mapped as an
// expression, under a partial index whose predicate alone the planner could use): every
// entry is read to test it, whatever the table's size.
func (n *node) whole() (full, ok bool) {
	switch n.NodeType {
	case "Seq Scan":
		return false, true
	case "Index Scan", "Index Only Scan":
		return true, n.IndexCond == "" && n.Filter != ""
	case "Bitmap Heap Scan":
		return true, n.Filter != "" && n.fullBitmap()
	}
	return false, false
}

// fullBitmap says whether a bitmap of n reads an index whole: a Bitmap Index Scan without
// an Index Cond, alone or in a BitmapOr (a BitmapAnd narrows it by the others).
func (n *node) fullBitmap() bool {
	for i := range n.Plans {
		c := &n.Plans[i]
		if c.NodeType == "Bitmap Index Scan" && c.IndexCond == "" || c.NodeType == "BitmapOr" && c.fullBitmap() {
			return true
		}
	}
	return false
}

func (n *node) walk(f func(*node)) {
	f(n)
	for i := range n.Plans {
		n.Plans[i].walk(f)
	}
}
