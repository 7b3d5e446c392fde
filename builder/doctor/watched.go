package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// watchedViews are the views whose columns a published document shows. A registration
// shows only as the seat it takes in its class (its ids: class_id), so what
// catalogue_registrations reads besides need not be watched.
var watchedViews = []string{"catalogue_courses", "catalogue_classes", "catalogue_rooms"}

// unwatched lists, for each catalogue_feeds row with a watched list, the columns of its
// table that list leaves out though an UPDATE of them must notify (notify.sql sends nothing
// for an UPDATE that changes no watched column): those a view of $1 reads, through other
// views too (viewReads' deps), by the column-level dependencies of the views' rewrite rules,
// and the row's ids and course_ids (an UPDATE that moves a class to another course).
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
    WHERE f.watched <> '{}'
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
	}, unwatched, watchedViews)
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
		strings.Join(watchedViews, ", ")+" read, and its ids"
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
