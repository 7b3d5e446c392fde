package doctor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// shiftedDay matches a view's date column written (col AT TIME ZONE 'zone')::date over one
// column, as EXPLAIN VERBOSE writes it: PostgreSQL 15 and later as AT TIME ZONE, earlier
// ones as a call of timezone(zone, col).
var shiftedDay = regexp.MustCompile(`^\(` +
	`(?:\((?P<alias>` + ident + `)\.(?P<col>` + ident + `) AT TIME ZONE '(?P<zone>(?:[^']|'')*)'::text\)` +
	`|timezone\('(?P<zone>(?:[^']|'')*)'::text, (?P<alias>` + ident + `)\.(?P<col>` + ident + `)\))` +
	`\)::date$`)

// checkLocalDays fails a class date mapped (col AT TIME ZONE 'zone')::date over a timestamp
// without time zone. Such a column is a local time: AT TIME ZONE makes it the instant that
// local time is in zone, and ::date takes that instant's day in the session's TimeZone,
// which the builder does not set (the server's, often UTC): a class at 00:30 in London is
// published the day before. Its type is a date, so the columns check passes it, and nothing
// else would tell. The recipe is right over a timestamptz, and (col AT TIME ZONE 'UTC' AT
// TIME ZONE zone) over a timestamp holding UTC times is not this shape.
func checkLocalDays(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "days of catalogue_classes"}
	var bad, fixes []string
	for _, col := range []string{"start_date", "end_date"} {
		shifted, source, zone, err := shiftedLocalTime(ctx, conn, col)
		if err != nil {
			return unreadable(c, err)
		}
		if shifted {
			bad = append(bad, fmt.Sprintf("%s is (%s AT TIME ZONE '%s')::date over a timestamp without time zone", col, source, zone))
			fixes = append(fixes, fmt.Sprintf("map %s as %s::date, the day written (or, if %[2]s holds UTC times, as (%[2]s AT TIME ZONE 'UTC' AT TIME ZONE '%s')::date)",
				col, source, zone))
		}
	}
	if len(bad) == 0 {
		c.OK, c.Detail = true, "start_date and end_date are no local time shifted to another zone's day"
		return c
	}
	c.Detail = strings.Join(bad, "; ") + ": that is the day, in the database session's time zone, of the moment the local time is in that zone, " +
		"not the day written (a class at 00:30 in Europe/London would be published the day before)"
	c.Fix = strings.Join(fixes, "; ")
	return c
}

// shiftedLocalTime says whether catalogue_classes' column col is shiftedDay over a column of
// type timestamp without time zone, naming that column (table.column) and the zone.
func shiftedLocalTime(ctx context.Context, conn *pgx.Conn, col string) (bool, string, string, error) {
	var plan []struct {
		Plan map[string]any `json:"Plan"`
	}
	// col is one of the contract's names, not a value from outside.
	if err := explain(ctx, conn, "SELECT "+col+" FROM catalogue_classes", &plan); err != nil || len(plan) == 0 {
		return false, "", "", err
	}
	out, _ := plan[0].Plan["Output"].([]any)
	expr, _ := firstOf(out).(string)
	m := submatches(shiftedDay, expr)
	if m == nil {
		return false, "", "", nil
	}
	tables := map[string][2]string{}
	walkPlan(plan[0].Plan, false, tables, new([]string))
	t, ok := tables[unquote(m["alias"])]
	if !ok {
		return false, "", "", nil
	}
	var typ string
	err := conn.QueryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
		WHERE a.attrelid = to_regclass(quote_ident($1) || '.' || quote_ident($2)) AND a.attname = $3 AND NOT a.attisdropped`,
		t[0], t[1], unquote(m["col"])).Scan(&typ)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", "", nil
	}
	local := strings.HasPrefix(typ, "timestamp") && strings.HasSuffix(typ, "without time zone")
	return local && err == nil, t[1] + "." + unquote(m["col"]), strings.ReplaceAll(m["zone"], "''", "'"), err
}

func firstOf(s []any) any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}

// submatches returns re's named groups in s by name (a name used in two alternatives: the
// one that matched), nil when re does not match.
func submatches(re *regexp.Regexp, s string) map[string]string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for i, name := range re.SubexpNames() {
		if name != "" && m[i] != "" {
			out[name] = m[i]
		}
	}
	return out
}
