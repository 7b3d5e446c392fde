package doctor

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// searchMatches are the columns of each view that the class search matches on (search.sql,
// search_index.sql): a change to what they read must bump catalogue_search_version, or the
// edge keeps answering from an index it believes current.
var searchMatches = []relation{
	{"catalogue_classes", []column{{"id", integer}, {"course_id", integer}, {"start_date", date}, {"end_date", date}, {"is_public", flag}}},
	{"catalogue_courses", []column{{"id", integer}, {"name", text}, {"type", text}, {"is_public", flag}}},
}

// planConds are the fields of an EXPLAIN node whose expressions decide which rows a view
// has: a column read there is searched as much as one the matched columns show.
var planConds = []string{"Filter", "Join Filter", "Hash Cond", "Merge Cond", "Index Cond", "Recheck Cond", "One-Time Filter", "TID Cond"}

// passThrough are the nodes whose children's output is their own. A scan under any other
// node may output every column of its table (the planner's physical target list), read or
// not, so only the top node's output, through these, is what the view's columns show.
var passThrough = []string{"Append", "Merge Append", "Subquery Scan", "Result", "Sort", "Incremental Sort", "Unique",
	"Materialize", "Gather", "Gather Merge", "Limit"}

// ident is an identifier as EXPLAIN writes it, quoted or not.
const ident = `"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*`

// qualified is a column as EXPLAIN VERBOSE writes it: alias.column, either quoted.
var qualified = regexp.MustCompile(`(` + ident + `)\.(` + ident + `)`)

// unsearched keeps the table columns (schema $1, table $2, column $3) whose feed bumps no
// search version when an UPDATE changes only them: not in the feed's searched list, or a
// feed of another kind than courses and classes, which has no search trigger
// (search_triggers.sql). A table no feed names is checkFedTables' to report.
// Each row: the table, its feed's kind, and its columns.
const unsearched = `
SELECT t.tbl, t.kind, array_agg(DISTINCT t.col ORDER BY t.col)
FROM (
  SELECT format('%I.%I', r.schema, r.rel)::regclass::text AS tbl, f.kind, r.col
  FROM unnest($1::text[], $2::text[], $3::text[]) AS r (schema, rel, col)
  JOIN catalogue_feeds f ON to_regclass(f.source) = format('%I.%I', r.schema, r.rel)::regclass
  WHERE f.kind NOT IN ('courses', 'classes') OR NOT (f.searched IS NULL OR r.col = ANY (f.searched))
) t
GROUP BY t.tbl, t.kind ORDER BY 1`

// checkSearched checks that every table column the search's matched columns read is in
// its feed's searched list (unsearched), by the columns EXPLAIN VERBOSE shows a query of
// them reading.
func checkSearched(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "searched columns"}
	var bad []string
	for _, rel := range searchMatches {
		cols, err := viewColumns(ctx, conn, rel)
		if err == nil {
			var found []string
			found, err = lines(ctx, conn, unsearchedLine, unsearched, cols[0], cols[1], cols[2])
			if len(found) > 0 {
				bad = append(bad, rel.name+" reads "+strings.Join(found, ", "))
			}
		}
		if err != nil {
			return unreadable(c, fmt.Errorf("what %s reads: %w", rel.name, err))
		}
	}
	if len(bad) > 0 {
		c.Detail = strings.Join(bad, "; ") + ", which the class search matches on but catalogue_feeds.searched does not list: " +
			"an UPDATE of only those leaves catalogue_search_version as it was, and the edge's search answers from its stale index"
		c.Fix = "add each column to the searched list of its table's row in catalogue_feeds (mapping.sql), or set searched to NULL (any column), " +
			"and run builder migrate; a table fed as registrations, rooms or locations has no search trigger: " +
			"feed it as courses or classes instead (with the ids that kind needs), or read those values from a table that is"
		return c
	}
	c.OK, c.Detail = true, "every table column the class search matches on is searched"
	return c
}

// unsearchedLine reads a row of unsearched: table.column, each, and for a table of another
// kind than courses and classes, that it keeps no search version.
func unsearchedLine(r pgx.CollectableRow) (string, error) {
	var table, kind string
	var cols []string
	err := r.Scan(&table, &kind, &cols)
	for i, col := range cols {
		cols[i] = table + "." + col
	}
	line := strings.Join(cols, ", ")
	if kind != "courses" && kind != "classes" {
		line += fmt.Sprintf(" (%s feeds %s, which keeps no search version)", table, kind)
	}
	return line, err
}

// viewColumns returns the schemas, tables and columns a query of rel's columns reads, as
// three lists of the same length.
func viewColumns(ctx context.Context, conn *pgx.Conn, rel relation) ([3][]string, error) {
	var out [3][]string
	names := make([]string, len(rel.columns))
	for i, col := range rel.columns {
		names[i] = col.name
	}
	var plan []struct {
		Plan map[string]any `json:"Plan"`
	}
	// The names are the contract's, not values: nothing here comes from outside.
	if err := explain(ctx, conn, "SELECT "+strings.Join(names, ", ")+" FROM "+rel.name, &plan); err != nil || len(plan) == 0 {
		return out, err
	}
	tables := map[string][2]string{} // alias: schema, table
	var exprs []string
	walkPlan(plan[0].Plan, true, tables, &exprs)
	return columnsIn(exprs, tables), nil
}

// walkPlan gathers the tables of node and its children by alias, and the expressions that
// read their columns: every condition, and the output where it is the view's (exact).
func walkPlan(node map[string]any, exact bool, tables map[string][2]string, exprs *[]string) {
	if rel, ok := node["Relation Name"].(string); ok {
		alias, _ := node["Alias"].(string)
		schema, _ := node["Schema"].(string)
		tables[alias] = [2]string{schema, rel}
	}
	for _, k := range planConds {
		if s, ok := node[k].(string); ok {
			*exprs = append(*exprs, s)
		}
	}
	if out, ok := node["Output"].([]any); ok && exact {
		for _, o := range out {
			if s, ok := o.(string); ok {
				*exprs = append(*exprs, s)
			}
		}
	}
	typ, _ := node["Node Type"].(string)
	children, _ := node["Plans"].([]any)
	for _, ch := range children {
		if m, ok := ch.(map[string]any); ok {
			// A subplan's output is a value of its parent's expressions (a scalar subquery).
			sub := m["Parent Relationship"] == "SubPlan" || m["Parent Relationship"] == "InitPlan"
			walkPlan(m, sub || exact && slices.Contains(passThrough, typ), tables, exprs)
		}
	}
}

// unquote reads an identifier as EXPLAIN writes it.
func unquote(id string) string {
	if strings.HasPrefix(id, `"`) {
		return strings.ReplaceAll(id[1:len(id)-1], `""`, `"`)
	}
	return id
}
