package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// notifyTriggers are the triggers of notify.sql on each table that feeds the catalogue.
var notifyTriggers = []string{"catalogue_notify_insert", "catalogue_notify_update", "catalogue_notify_delete", "catalogue_notify_truncate"}

// feed is a table whose changes the catalogue must hear of, with the triggers it needs.
type feed struct {
	table    string
	triggers []string
}

// feeds returns the tables the triggers must be on: the search's version triggers always
// (the edge's index relies on them), the change notifications when builder.listen is on.
func feeds(listen bool) []feed {
	search := map[string]string{"courses": "courses_search_changed", "classes": "classes_search_changed"}
	var fs []feed
	for _, t := range []string{"courses", "classes", "registrations", "rooms", "locations"} {
		f := feed{table: t}
		if s, ok := search[t]; ok {
			f.triggers = append(f.triggers, s)
		}
		if listen {
			f.triggers = append(f.triggers, notifyTriggers...)
		}
		if len(f.triggers) > 0 {
			fs = append(fs, f)
		}
	}
	return fs
}

// checkTriggers checks that every trigger the freshness path and the edge's search index
// rely on is installed and enabled.
func checkTriggers(ctx context.Context, conn *pgx.Conn, listen bool) []Check {
	var cs []Check
	for _, f := range feeds(listen) {
		cs = append(cs, checkFeed(ctx, conn, f, listen))
	}
	return cs
}

func checkFeed(ctx context.Context, conn *pgx.Conn, f feed, listen bool) Check {
	c := Check{Name: "triggers on " + f.table}
	var missing []string
	err := conn.QueryRow(ctx, `
SELECT COALESCE(array_agg(w.name ORDER BY w.ord), '{}')
FROM unnest($2::text[]) WITH ORDINALITY AS w (name, ord)
WHERE NOT EXISTS (
    SELECT 1 FROM pg_trigger t
    WHERE t.tgrelid = to_regclass($1) AND t.tgname = w.name AND t.tgenabled <> 'D')`,
		f.table, f.triggers).Scan(&missing)
	if err != nil {
		c.Detail = "cannot read: " + err.Error()
		return c
	}
	if len(missing) > 0 {
		c.Detail = "missing or disabled: " + strings.Join(missing, ", ")
		c.Fix = "run builder migrate (with builder.listen as builder serve runs) to install them"
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%d installed", len(f.triggers))
	if !listen {
		c.Detail += " (builder.listen is off: no change notifications)"
	}
	return c
}
