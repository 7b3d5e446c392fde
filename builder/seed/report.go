package seed

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/templates"
)

// Objects are the objects of a database's current schema that Migrate can create, change or
// remove, by kind and name, with a text that changes with their definition
// (templates.SchemaObjects).
type Objects map[[2]string]string

// ReadObjects reads the objects of conn's current schema.
func ReadObjects(ctx context.Context, conn *pgx.Conn) (Objects, error) {
	rows, err := conn.Query(ctx, templates.MustDefault().SQL(templates.SchemaObjects))
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	objs := Objects{}
	var kind, name, def string
	_, err = pgx.ForEachRow(rows, []any{&kind, &name, &def}, func() error {
		objs[[2]string{kind, name}] = def
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	return objs, nil
}

// kindOrder is the order in which Changes lists kinds: containers before what they hold.
var kindOrder = []string{"table", "type", "column", "view", "function", "trigger", "index"}

// Changes says what differs from before to after, one line per object, such as "created
// table courses", "added column api_tokens.rate_limit", "changed function
// catalogue_notify(text, jsonb)" or "removed trigger courses_changed on courses"; the
// columns and indexes of a table created or removed are not listed apart from it.
func Changes(before, after Objects) []string {
	tableGone := func(name string, o Objects) bool {
		table, _, _ := strings.Cut(name, ".")
		if _, on, ok := strings.Cut(name, " on "); ok {
			table = on
		}
		_, ok := o[[2]string{"table", table}]
		return !ok
	}
	var lines []string
	keys := append(slices.Collect(maps.Keys(before)), slices.Collect(maps.Keys(after))...)
	slices.SortFunc(keys, func(a, b [2]string) int {
		if d := slices.Index(kindOrder, a[0]) - slices.Index(kindOrder, b[0]); d != 0 {
			return d
		}
		return strings.Compare(a[1], b[1])
	})
	keys = slices.Compact(keys)
	for _, k := range keys {
		old, had := before[k]
		cur, has := after[k]
		kind, name := k[0], k[1]
		part := kind == "column" || kind == "index"
		switch {
		case !had && has && !(part && tableGone(name, before)):
			verb := "created"
			if kind == "column" {
				verb = "added"
			}
			lines = append(lines, verb+" "+kind+" "+name)
		case had && !has && !(part && tableGone(name, after)):
			lines = append(lines, "removed "+kind+" "+name)
		case had && has && old != cur:
			lines = append(lines, "changed "+kind+" "+name)
		}
	}
	return lines
}
