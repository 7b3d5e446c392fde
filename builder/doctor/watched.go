package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// watchedViews are the views whose columns a published document shows.
var watchedViews = []string{"catalogue_courses", "catalogue_classes", "catalogue_rooms"}

// seats is the view whose rows are the seats taken: a published document shows only how
// many a class has, so what decides its rows and its id and class_id must be watched (a
// registrations table filtered on a status that does not watch it left a cancellation's
// seat counted until builder.schedule). privateColumns are its columns that only a
// signed-in student's live read shows (student.sql), never a published document: the
// columns of the tables that feed only them need not be watched (seatReads).
const seats = "catalogue_registrations"

var privateColumns = []string{"student_id", "test_date"}

// unwatched lists, for each catalogue_feeds row with a watched list, the columns of its
// table that list leaves out though an UPDATE of them must notify (notify.sql sends nothing
// for an UPDATE that changes no watched column): those a view of $1 reads, through other
// views too (viewReads' deps), by the column-level dependencies of the views' rewrite rules,
// and the row's ids and course_ids (an UPDATE that moves a class to another course). What
// catalogue_registrations (seats) reads counts only when it is also one of the columns
// (schema $2, table $3, column $4) that a query of its other columns reads (seatReads).
// An empty watched list is NULL's any column (notify.sql's row expression of it is empty).
// A column an intermediate view reads counts though the catalogue view may not use it:
// pg_depend does not say which of a view's columns reads which.
// Each row: the feed's source, its table, the column (both quoted as SQL needs), the views
// reading it, whether it is the ids or course_ids, and the watched list with every missing
// column added, as a literal for mapping.sql.
const unwatched = viewReads + `, rules AS (
    SELECT oid AS view, oid AS rel FROM pg_class WHERE oid IN (SELECT to_regclass(n) FROM unnest($1::text[]) AS n)
  UNION
    SELECT deps.view, deps.rel FROM deps JOIN pg_class c ON c.oid = deps.rel AND c.relkind = 'v'
), shown AS (
    SELECT DISTINCT rules.view, d.refobjid AS rel, d.refobjsubid AS attnum
    FROM rules
    JOIN pg_rewrite r ON r.ev_class = rules.rel
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
        AND d.refclassid = 'pg_class'::regclass AND d.refobjsubid > 0
), needed AS (
    SELECT f.source, a.attnum, a.attname::text AS col, s.view::regclass::text AS view, NULL AS role
    FROM catalogue_feeds f
    JOIN shown s ON s.rel = to_regclass(f.source)
    JOIN pg_attribute a ON a.attrelid = s.rel AND a.attnum = s.attnum AND NOT a.attisdropped
    WHERE f.watched <> '{}' AND (s.view IS DISTINCT FROM to_regclass('` + seats + `') OR EXISTS (
        SELECT 1 FROM unnest($2::text[], $3::text[], $4::text[]) AS p (schema, rel, col)
        WHERE to_regclass(format('%I.%I', p.schema, p.rel)) = s.rel AND p.col = a.attname::text))
  UNION ALL
    SELECT f.source, a.attnum, a.attname::text, NULL, i.role
    FROM catalogue_feeds f
    CROSS JOIN LATERAL (VALUES (f.ids, 'ids'), (f.course_ids, 'course_ids')) AS i (col, role)
    JOIN pg_attribute a ON a.attrelid = to_regclass(f.source) AND a.attname = i.col AND a.attnum > 0 AND NOT a.attisdropped
    WHERE f.watched <> '{}'
), missing AS (
    SELECT n.source, n.attnum, n.col,
           COALESCE(array_agg(DISTINCT n.view) FILTER (WHERE n.view IS NOT NULL), '{}') AS views,
           COALESCE(string_agg(DISTINCT n.role, ' and '), '') AS role
    FROM needed n JOIN catalogue_feeds f USING (source)
    WHERE n.col <> ALL (f.watched)
    GROUP BY n.source, n.attnum, n.col
)
SELECT m.source, to_regclass(m.source)::text, quote_ident(m.col), m.views, m.role,
       quote_literal((f.watched || array_agg(m.col) OVER (PARTITION BY m.source ORDER BY m.attnum
           ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING))::text)
FROM missing m JOIN catalogue_feeds f USING (source)
ORDER BY m.source, m.attnum`

// checkWatched checks that every feed's watched list names the columns an UPDATE of which
// changes a published document (unwatched): an UPDATE of another alone sends no
// notification, and the change waits for builder.schedule.
func checkWatched(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "watched columns"}
	reads, err := seatReads(ctx, conn)
	if err != nil {
		return unreadable(c, fmt.Errorf("what %s reads: %w", seats, err))
	}
	var fixes []string
	bad, err := lines(ctx, conn, func(r pgx.CollectableRow) (string, error) {
		var source, table, col, role, watched string
		var views []string
		err := r.Scan(&source, &table, &col, &views, &role, &watched)
		fix := "set watched of catalogue_feeds row " + source + " to " + watched + " in mapping.sql"
		if len(fixes) == 0 || fixes[len(fixes)-1] != fix {
			fixes = append(fixes, fix)
		}
		return table + "." + col + unwatchedWhy(views, role) + " is not in the watched columns of catalogue_feeds row " + source, err
	}, unwatched, append(slices.Clone(watchedViews), seats), reads[0], reads[1], reads[2])
	if err != nil {
		c.Detail = "cannot read: " + err.Error()
		c.Fix = "run builder migrate, which creates catalogue_feeds"
		return c
	}
	if len(bad) > 0 {
		them := "it"
		if len(bad) > 1 {
			them = "them"
		}
		c.Detail = strings.Join(bad, "; ") + fmt.Sprintf(": an UPDATE of %s alone sets off no build, and waits for builder.schedule", them)
		c.Fix = strings.Join(fixes, "; ") + ", then run builder migrate"
		return c
	}
	c.OK, c.Detail = true, "every feed with a watched list names the columns of its table that "+
		strings.Join(watchedViews, ", ")+" read, those "+seats+" reads but for its "+strings.Join(privateColumns, " and ")+
		", and its ids"
	return c
}

// unwatchedWhy says why a column must be watched: the views that read it, and whether it
// is the row's ids or course_ids.
func unwatchedWhy(views []string, role string) string {
	switch {
	case len(views) == 0:
		return ", the row's " + role + ","
	case role != "":
		return ", which " + readBy(views) + " (the row's " + role + "),"
	default:
		return ", which " + readBy(views) + ","
	}
}

// readBy is "v reads" or "v and w read".
func readBy(views []string) string {
	if len(views) == 1 {
		return views[0] + " reads"
	}
	return strings.Join(views[:len(views)-1], ", ") + " and " + views[len(views)-1] + " read"
}

// seatReads returns the schemas, tables and columns that a query of seats' columns other
// than privateColumns reads, as three lists of the same length: those its plan (EXPLAIN
// VERBOSE) names anywhere, in a node's output or in any expression. A column the planner
// leaves out of that plan does not change those columns nor which rows there are: it feeds
// only student_id or test_date (as user_id AS student_id, or COALESCE(user_id, guest_id)),
// or nothing (a join the planner removed, whose unique key keeps the rows as they are).
// A column the view reads elsewhere too (in WHERE, a join, GROUP BY, DISTINCT) is in the
// plan, and so watched. The index scans are disabled: one on a partial index leaves out
// the conditions its predicate implies (a seat index on status <> 'cancelled' hid status).
// Its limits, all on the safe side but the last: a scan may output more columns than its
// parent reads (the planner's physical target list under a join), which must then be
// watched though nothing shows them; an alias that happens to appear in a constant
// ('r.x') counts too; and a function of the view that reads a table in its body (not
// through the view) is in no plan, as it is in no dependency of the view.
func seatReads(ctx context.Context, conn *pgx.Conn) ([3][]string, error) {
	var out [3][]string
	var cols []string
	for _, rel := range contract {
		if rel.name == seats {
			for _, col := range rel.columns {
				if !slices.Contains(privateColumns, col.name) {
					cols = append(cols, col.name)
				}
			}
		}
	}
	var plan any
	// The names are the contract's, not values: nothing here comes from outside.
	if err := explain(ctx, conn, "SELECT "+strings.Join(cols, ", ")+" FROM "+seats, &plan); err != nil {
		return out, err
	}
	tables := map[string][2]string{} // alias: schema, table
	var exprs []string
	planStrings(plan, tables, &exprs)
	return columnsIn(exprs, tables), nil
}

// planStrings gathers the tables of a plan's nodes by alias, and every string the plan
// holds: each field of each node, whatever its name (Output, Filter, Hash Cond, Group Key,
// Sort Key, Cache Key...).
func planStrings(v any, tables map[string][2]string, strs *[]string) {
	switch v := v.(type) {
	case map[string]any:
		if rel, ok := v["Relation Name"].(string); ok {
			alias, _ := v["Alias"].(string)
			schema, _ := v["Schema"].(string)
			tables[alias] = [2]string{schema, rel}
		}
		for _, e := range v {
			planStrings(e, tables, strs)
		}
	case []any:
		for _, e := range v {
			planStrings(e, tables, strs)
		}
	case string:
		*strs = append(*strs, v)
	}
}
