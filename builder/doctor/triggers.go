package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// notifyTriggers are the triggers of notify.sql on each table that feeds the catalogue.
var notifyTriggers = []string{"catalogue_notify_insert", "catalogue_notify_update", "catalogue_notify_delete", "catalogue_notify_truncate"}

// searchTrigger is the trigger of search_triggers.sql on the tables that feed courses and
// classes: the edge's search index relies on it whatever builder.listen says.
const searchTrigger = "catalogue_search_changed"

// fedKinds are the kinds of row that some table must feed, or their changes would never
// reach a document (locations may come with the rooms, in one table). Rooms need no feed of
// their own when every table catalogue_rooms reads feeds another kind (roomsFedOtherwise).
var fedKinds = []string{"courses", "classes", "registrations", "rooms"}

// feed is a row of catalogue_feeds, with the triggers its table needs.
type feed struct {
	source, kind string
	triggers     []string
}

// checkTriggers checks that the mapping names a table for each kind of row and that every
// trigger the freshness path and the edge's search index rely on is installed and enabled
// on the tables it names.
func checkTriggers(ctx context.Context, conn *pgx.Conn, listen bool) []Check {
	fs, err := feeds(ctx, conn, listen)
	if err != nil {
		return []Check{{Name: "feeds", Detail: "cannot read catalogue_feeds: " + err.Error(),
			Fix: "run builder migrate, which creates catalogue_feeds and fills it from mapping.sql"}}
	}
	c := Check{Name: "feeds"}
	var kinds, missing []string
	for _, f := range fs {
		kinds = append(kinds, f.kind)
	}
	for _, k := range fedKinds {
		if !slices.Contains(kinds, k) && (k != "rooms" || !roomsFedOtherwise(ctx, conn)) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		c.Detail = "no table feeds " + strings.Join(missing, ", ") + ": their changes set off no build, and wait for builder.schedule"
		c.Fix = "add to catalogue_feeds in mapping.sql, with that kind, a table the view of each reads that no other row names " +
			"(a table feeds one kind: source is the key), and run builder migrate"
	} else {
		c.OK, c.Detail = true, fmt.Sprintf("%d tables feed the catalogue", len(fs))
	}
	cs := []Check{c}
	for _, f := range fs {
		cs = append(cs, checkFeed(ctx, conn, f, listen))
	}
	return cs
}

// feeds reads catalogue_feeds.
func feeds(ctx context.Context, conn *pgx.Conn, listen bool) ([]feed, error) {
	rows, err := conn.Query(ctx, `SELECT source, kind FROM catalogue_feeds ORDER BY source`)
	if err != nil {
		return nil, err
	}
	var fs []feed
	for rows.Next() {
		var f feed
		if err := rows.Scan(&f.source, &f.kind); err != nil {
			return nil, err
		}
		if f.kind == "courses" || f.kind == "classes" {
			f.triggers = append(f.triggers, searchTrigger)
		}
		if listen {
			f.triggers = append(f.triggers, notifyTriggers...)
		}
		fs = append(fs, f)
	}
	return fs, rows.Err()
}

func checkFeed(ctx context.Context, conn *pgx.Conn, f feed, listen bool) Check {
	c := Check{Name: "triggers on " + f.source}
	if len(f.triggers) == 0 {
		c.OK, c.Detail = true, "none needed (builder.listen is off: no change notifications)"
		return c
	}
	var missing []string
	err := conn.QueryRow(ctx, `
SELECT COALESCE(array_agg(w.name ORDER BY w.ord), '{}')
FROM unnest($2::text[]) WITH ORDINALITY AS w (name, ord)
WHERE NOT EXISTS (
    SELECT 1 FROM pg_trigger t
    WHERE t.tgrelid = to_regclass($1) AND t.tgname = w.name AND t.tgenabled <> 'D')`,
		f.source, f.triggers).Scan(&missing)
	if err != nil {
		c.Detail = "cannot read: " + err.Error()
		return c
	}
	if len(missing) > 0 {
		c.Detail = "missing or disabled: " + strings.Join(missing, ", ")
		c.Fix = "run builder migrate (with builder.listen as builder serve runs) to install them"
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%d installed (feeding %s)", len(f.triggers), f.kind)
	if !listen {
		c.Detail += "; builder.listen is off: no change notifications"
	}
	return c
}

// MissingTriggers returns the failed checks of the triggers builder.listen needs on the
// primary conn: builder serve logs them at start, since without them it listens and hears
// nothing of a table. A database without catalogue_feeds has not been migrated, which
// every build says: nothing is returned for it.
func MissingTriggers(ctx context.Context, conn *pgx.Conn) []Check {
	if _, err := feeds(ctx, conn, true); err != nil {
		return nil
	}
	return failed(checkTriggers(ctx, conn, true))
}

// viewReads is the start of a query on reads(view, rel): each table (materialized view,
// foreign table) that a view of $1 reads, through other views too; and on fed(rel): the
// tables catalogue_feeds names.
const viewReads = `
WITH RECURSIVE deps(view, rel) AS (
    SELECT v.oid, d.refobjid
    FROM pg_class v
    JOIN pg_rewrite r ON r.ev_class = v.oid
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
        AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> v.oid
    WHERE v.oid IN (SELECT to_regclass(n) FROM unnest($1::text[]) AS n)
  UNION
    SELECT deps.view, d.refobjid
    FROM deps
    JOIN pg_class c ON c.oid = deps.rel AND c.relkind = 'v'
    JOIN pg_rewrite r ON r.ev_class = c.oid
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
        AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> c.oid
), reads AS (
    SELECT DISTINCT deps.view, deps.rel
    FROM deps JOIN pg_class t ON t.oid = deps.rel
    WHERE t.relkind IN ('r', 'p', 'f', 'm')
), fed AS (
    SELECT to_regclass(source) AS rel FROM catalogue_feeds WHERE to_regclass(source) IS NOT NULL
)`

// unfedTables lists each table a catalogue_* view reads that no catalogue_feeds row names:
// its changes set off no build, and wait for the schedule.
// Each row: the view, the table, and its relkind ('r', 'p'; 'm' a materialized view, 'f' a
// foreign table).
const unfedTables = viewReads + `
SELECT view::regclass::text, rel::regclass::text, (SELECT relkind::text FROM pg_class WHERE oid = rel)
FROM reads WHERE rel NOT IN (SELECT rel FROM fed)
ORDER BY 1, 2`

// roomsFedOtherwise says whether every table catalogue_rooms reads feeds another kind, as
// when the address is on the class row (a view of rooms over the table of the classes).
// Such a table cannot feed rooms too (catalogue_feeds.source is its key: migrate fails on
// a second row), and need not: its own feed's notification names the rows it changed
// (notify.sql), and a build re-renders the classes it names or that belong to the courses
// it names (changes_classes.sql), reading each class's room through catalogue_rooms
// (classes_by_id.sql) and its course's upcoming class with it (upcoming.sql). That feed's
// watched columns must name the ones catalogue_rooms reads, as for any column of a view it
// feeds. No catalogue_rooms, or a query that fails, says no.
func roomsFedOtherwise(ctx context.Context, conn *pgx.Conn) bool {
	var ok bool
	err := conn.QueryRow(ctx, viewReads+`
SELECT to_regclass('catalogue_rooms') IS NOT NULL AND NOT EXISTS (SELECT 1 FROM reads WHERE rel NOT IN (SELECT rel FROM fed))`, []string{"catalogue_rooms"}).Scan(&ok)
	return err == nil && ok
}

// checkFedTables checks that every table the views read feeds them (unfedTables): a view
// that joins a table catalogue_feeds does not name passed every other check, and a change
// of that table waited for the schedule.
func checkFedTables(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "tables the views read"}
	names := make([]string, len(contract))
	for i, rel := range contract {
		names[i] = rel.name
	}
	var fixes []string
	tables := false // some of them are tables, not materialized views or foreign tables
	unfed, err := lines(ctx, conn, func(r pgx.CollectableRow) (string, error) {
		var view, table, kind string
		err := r.Scan(&view, &table, &kind)
		fixes, tables = append(fixes, unfedFix(view, table, kind)), tables || kind == "r" || kind == "p"
		return view + " reads " + table, err
	}, unfedTables, names)
	if err != nil {
		c.Detail = "cannot read: " + err.Error()
		c.Fix = "run builder migrate, which creates catalogue_feeds"
		return c
	}
	if len(unfed) > 0 {
		c.Detail = strings.Join(unfed, "; ") + ", which no catalogue_feeds row names: its changes wait for builder.schedule"
		c.Fix = strings.Join(fixes, "; ")
		if tables {
			c.Fix += ". A table feeds one kind. A table without such a column (orders joined to registrations by order) cannot be fed, " +
				"as its notifications would name other rows: its changes wait for builder.schedule, unless the view reads instead a table that has one"
		}
		return c
	}
	c.OK, c.Detail = true, "every table the views read feeds them"
	return c
}

// feedFor says, by the view a table changes, what its catalogue_feeds row must name: the
// triggers send the values of its ids column as that kind's ids (notify.sql), and a build
// re-renders the rows they name, so a column holding other ids re-renders other rows.
var feedFor = map[string]string{
	"catalogue_courses":       "kind courses, with ids a column of it holding the id of the courses it changes",
	"catalogue_classes":       "kind classes, with ids a column of it holding the id of the classes it changes and course_ids one holding their course_id",
	"catalogue_registrations": "kind registrations, with ids a column of it holding the class_id of the registrations it changes",
	"catalogue_rooms":         "kind rooms, with ids a column of it holding the id of the rooms it changes (or kind locations, with their location_id)",
}

// unfedFix says how table, of relkind kind, which view reads, can feed it, if it can.
func unfedFix(view, table, kind string) string {
	switch kind {
	case "m":
		// PostgreSQL puts no trigger on a materialized view: migrate fails on its feed.
		return table + " is a materialized view, which cannot be fed (it can have no trigger: builder migrate fails on its row): " +
			"its changes are published on builder.schedule, or by builder run after each REFRESH MATERIALIZED VIEW " + table +
			"; to publish them at once, map " + view + " on the tables it reads, and feed those"
	case "f":
		// Its triggers would fire for changes made through it here, never for the others.
		return table + " is a foreign table, which cannot be fed: a trigger on it sees only the changes made through it on this server, " +
			"not the changes made in its own server, so they are published on builder.schedule, or by builder run after them"
	}
	return "add to catalogue_feeds in mapping.sql " + table + ": " + feedFor[view] +
		", and watched the columns " + view + " reads of it; then run builder migrate"
}
