package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// kind is a family of PostgreSQL types the contract accepts for a column.
type kind struct {
	name  string
	types []string // format_type names
	fix   string   // how to map another type into it
}

var (
	integer = kind{"an integer", []string{"smallint", "integer", "bigint"}, "cast it in the mapping (col::bigint)"}
	// Integers whose meaning decides their fix: a price in an unsaid unit (public-catalogue-api.md
	// 2.2, "Unit of cost: not shown"), and an amount in cents (2.4), which a price in whole
	// units is not.
	price = kind{integer.name, integer.types,
		"a numeric price in whole units: round(col)::integer (the contract does not say cost's unit), another type: col::integer"}
	cents = kind{integer.name, integer.types,
		"an amount in cents (public-catalogue-api.md 2.4): one in whole units is round(col * 100)::bigint, one in cents col::bigint"}
	date = kind{"a date", []string{"date"},
		"map it as a date in the mapping: col::date where PostgreSQL casts its type to date, to_date(col::text, 'YYYYMMDD') with the format its values are written in where not"}
	// character (char(n)) too: its padded values are refused by checkPadding, not the type.
	text = kind{"text", []string{"text", "character varying", "character"}, "cast it in the mapping (col::text)"}
	flag = kind{"a boolean", []string{"boolean"},
		"map it as a condition, such as (status = 'published' AND deleted_at IS NULL)"}
)

// column is one column the catalogue reads from a mapped name.
type column struct {
	name string
	kind kind
}

// relation is a name the catalogue's queries read, with the columns they need.
type relation struct {
	name    string
	columns []column
}

// contract is what the catalogue's queries read from the provider's database: the views of
// the mapping (templates/mapping.sql).
var contract = []relation{
	{"catalogue_courses", []column{{"id", integer}, {"name", text}, {"type", text}, {"description", text}, {"is_public", flag}}},
	{"catalogue_classes", []column{{"id", integer}, {"course_id", integer}, {"room_id", integer}, {"start_date", date},
		{"end_date", date}, {"schedule", text}, {"cost", price}, {"seat_limit", integer},
		{"down_payment", cents}, {"is_public", flag}}},
	{"catalogue_rooms", []column{{"id", integer}, {"name", text}, {"location_id", integer}, {"location_name", text},
		{"city", text}, {"state", text}, {"zip", text}, {"country", text}}},
	{"catalogue_registrations", []column{{"id", integer}, {"class_id", integer}, {"student_id", integer}, {"test_date", date}}},
}

// courseTypes are the values of courses.type the contract knows.
var courseTypes = []string{"Online", "Brick and Mortar", "Blended"}

// checkColumns checks, for each mapped name, that it exists with every column the queries
// read, each of a type the contract can carry.
func checkColumns(ctx context.Context, conn *pgx.Conn) []Check {
	var cs []Check
	for _, rel := range contract {
		cs = append(cs, checkRelation(ctx, conn, rel))
	}
	return cs
}

func checkRelation(ctx context.Context, conn *pgx.Conn, rel relation) Check {
	c := Check{Name: "columns of " + rel.name}
	rows, err := conn.Query(ctx, `
SELECT a.attname, format_type(a.atttypid, NULL)
FROM pg_attribute a
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, rel.name)
	if err != nil {
		c.Detail = "cannot read: " + err.Error()
		return c
	}
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			c.Detail = "cannot read: " + err.Error()
			return c
		}
		types[name] = typ
	}
	if err := rows.Err(); err != nil {
		c.Detail = "cannot read: " + err.Error()
		return c
	}
	if len(types) == 0 {
		c.Detail = rel.name + " does not exist"
		c.Fix = "create it in mapping.sql (templates.dir) and run builder migrate"
		return c
	}
	var missing, wrong, fixes []string
	for _, col := range rel.columns {
		typ, ok := types[col.name]
		switch {
		case !ok:
			missing = append(missing, col.name)
		case !slices.Contains(col.kind.types, typ):
			wrong = append(wrong, fmt.Sprintf("%s is %s, not %s", col.name, typ, col.kind.name))
			fixes = append(fixes, col.name+": "+typeFix(col.kind, typ))
		}
	}
	if len(missing) > 0 {
		wrong = append([]string{"missing " + strings.Join(missing, ", ")}, wrong...)
		fixes = append([]string{"add " + strings.Join(missing, ", ") + " to " + rel.name + " in mapping.sql"}, fixes...)
	}
	if len(wrong) > 0 {
		c.Detail, c.Fix = strings.Join(wrong, "; "), strings.Join(fixes, "; ")
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%d columns as the contract needs them", len(rel.columns))
	return c
}

// typeFix says how to map a column of type typ into k, where "cast it" is not the answer.
func typeFix(k kind, typ string) string {
	switch {
	case typ == "uuid" && k.name == integer.name:
		// PostgreSQL has no cast from uuid to an integer.
		return "a uuid cannot be cast to an integer: map an integer key of the row instead (add a bigint identity column to the table if it has none)"
	case typ == "timestamp without time zone" && k.name == date.name:
		// Its values are local times, and their day is the one written. AT TIME ZONE would
		// make each an instant, whose ::date is then taken in the session's zone (UTC):
		// 2027-07-15 00:30 in London is 2027-07-14 there.
		return "a timestamp is not a date: map it as col::date, the day of its local time " +
			"(not (col AT TIME ZONE …)::date, which takes the day in the session's zone)"
	case typ == "timestamp with time zone" && k.name == date.name:
		// An instant: col::date takes its day in the session's zone, not the provider's.
		return "a timestamptz is not a date: map it as (col AT TIME ZONE 'the provider''s zone')::date, its day in that zone"
	case (typ == "text" || typ == "character varying" || typ == "character") && k.name == date.name:
		// The timestamp's fix, AT TIME ZONE, is refused on text ("function timezone(unknown,
		// text) does not exist"); a cast reads other than ISO dates by the session's DateStyle.
		return "a text value is not a date: map it as to_date(col, 'YYYY-MM-DD') with the format its values are written in " +
			"(col::date reads ISO dates, and others in the order the session's DateStyle says)"
	}
	return k.fix
}

// checkTypeValues checks that every course's type is one the contract knows.
func checkTypeValues(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "course types"}
	bad, err := lines(ctx, conn, func(r pgx.CollectableRow) (string, error) {
		var v string
		var n int64
		err := r.Scan(&v, &n)
		return fmt.Sprintf("%q (%d courses)", v, n), err
	}, `
SELECT COALESCE(type::text, 'NULL'), count(*)
FROM catalogue_courses
WHERE type IS NULL OR type::text <> ALL($1::text[])
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5`, courseTypes)
	if err != nil {
		c.Detail = "cannot read catalogue_courses.type: " + err.Error()
		c.Fix = "map catalogue_courses with a type column (see columns of catalogue_courses)"
		return c
	}
	if len(bad) > 0 {
		c.Detail = "values outside " + strings.Join(courseTypes, ", ") + ": " + strings.Join(bad, ", ")
		c.Fix = "map each of the provider's values to one of the three in the mapping (a CASE on the column)"
		return c
	}
	c.OK, c.Detail = true, "every value is "+strings.Join(courseTypes, ", ")+" or none"
	return c
}

// servedValues finds the rows of the mapping that a build reads but cannot render: the
// reference schema makes the dates and the cost NOT NULL and the ids primary keys, a
// provider's mapping need not (a self-paced class without an end date, a nullable price, a
// join that repeats a room), and the build then fails on the first such row, after the
// doctor said the columns were right. Each row of the query is a problem, with how many
// rows have it and the smallest id among them (NULL when every one has a NULL id: those
// are checkIDs' to report, and not repeated here).
const servedValues = `
WITH served AS (
  SELECT cl.* FROM catalogue_classes cl JOIN catalogue_courses co ON co.id = cl.course_id AND co.is_public
  WHERE cl.is_public)
SELECT rel, what, n, first FROM (
  SELECT 1, 'catalogue_courses', 'public courses without a name', count(*), min(id)
  FROM catalogue_courses WHERE is_public AND name IS NULL
  UNION ALL
  SELECT 2, 'catalogue_classes', 'public classes without a start_date or an end_date, or with an infinite one', count(*), min(id)
  FROM served WHERE start_date IS NULL OR end_date IS NULL OR NOT isfinite(start_date) OR NOT isfinite(end_date)
  UNION ALL
  SELECT 3, 'catalogue_classes', 'public classes without a cost', count(*), min(id) FROM served WHERE cost IS NULL
  UNION ALL
  SELECT 4, 'catalogue_courses', 'ids on more than one row', count(*), min(id)
  FROM (SELECT id FROM catalogue_courses WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1) d
  UNION ALL
  SELECT 5, 'catalogue_classes', 'ids on more than one row', count(*), min(id)
  FROM (SELECT id FROM catalogue_classes WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1) d
  UNION ALL
  SELECT 6, 'catalogue_rooms', 'ids on more than one row', count(*), min(id)
  FROM (SELECT id FROM catalogue_rooms WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1) d
  UNION ALL
  -- A build does not fail on these: it counts each row as a seat taken.
  SELECT 7, 'catalogue_registrations', 'ids on more than one row (each counted as a seat taken)', count(*), min(id)
  FROM (SELECT id FROM catalogue_registrations WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1) d
  UNION ALL
  -- Nor on these: classes.sql joins the room, and finds none (a rooms view that leaves out
  -- retired rooms), so the class is published with no room and no location, as one with no
  -- room assigned (NULL) rightly is.
  SELECT 8, 'catalogue_classes', 'public classes whose room_id is no row of catalogue_rooms', count(*), min(id)
  FROM served WHERE room_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM catalogue_rooms ro WHERE ro.id = served.room_id)
) AS p(ord, rel, what, n, first)
WHERE n > 0 ORDER BY ord`

// checkServedValues checks that every row a build reads can be rendered (servedValues), and
// that the edge can read every registration's student values (studentColumns).
func checkServedValues(ctx context.Context, conn *pgx.Conn) Check {
	c := rowsCheck{name: "values the builder reads", query: servedValues, remedies: servedRemedies,
		ok: "every public course and class can be rendered, with its room; ids are unique",
	}.run(ctx, conn)
	bad, fixes := unreadableStudentValues(ctx, conn)
	if len(bad) == 0 {
		return c
	}
	detail := strings.Join(bad, "; ") + ": a signed-in student's class read (student.sql, on the edge) that meets such a row fails (503)"
	if c.OK {
		c.OK, c.Detail, c.Fix = false, detail, strings.Join(fixes, "; ")
		return c
	}
	c.Detail, c.Fix = detail+"; "+c.Detail, strings.Join(fixes, "; ")+"; "+c.Fix
	return c
}

// studentColumns are the columns of catalogue_registrations that no build reads, only a
// signed-in student's class read on the edge (student.sql), with how to map them: a value
// that does not convert (a learner code cast to bigint) fails that read, not a build.
var studentColumns = []struct{ name, fix string }{
	{"student_id", "map student_id as the integer the JWT's student claim holds (D31), NULL where there is none: " +
		"the student's integer key, or the digits of a code (NULLIF(regexp_replace(col, '\\D', '', 'g'), '')::bigint)"},
	{"test_date", "map test_date so that every value converts or is NULL: one WHEN for each format the column holds, " +
		"to_date(col, format) only where the value is written in it (CASE WHEN col ~ '^\\d\\d/\\d\\d/\\d{4}$' THEN to_date(col, 'DD/MM/YYYY') " +
		"WHEN col ~ '^\\d{4}-\\d\\d-\\d\\d$' THEN to_date(col, 'YYYY-MM-DD') END); a value in none is NULL, so look at those left"},
}

// unreadableStudentValues reads every row's value of each of studentColumns, which an
// aggregate over the column forces, and returns the columns it cannot read, each with its
// error, and their fixes.
func unreadableStudentValues(ctx context.Context, conn *pgx.Conn) (bad, fixes []string) {
	for _, col := range studentColumns {
		var n int64
		q := fmt.Sprintf(`SELECT count(%s) FROM catalogue_registrations`, pgx.Identifier{col.name}.Sanitize())
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			bad = append(bad, "catalogue_registrations."+col.name+": "+err.Error())
			fixes = append(fixes, col.fix)
		}
	}
	return bad, fixes
}

// servedRemedies are what each problem of servedValues does and how to fix it: a check that
// finds a few of them says only theirs.
var servedRemedies = map[string]remedy{
	"public courses without a name": {"a build fails on them",
		"give every public course a name (COALESCE, or leave such courses out of catalogue_courses)"},
	"public classes without a start_date or an end_date, or with an infinite one": {"a build fails on them",
		"give every public class finite dates (COALESCE, or leave such classes out of catalogue_classes)"},
	"public classes without a cost": {"a build fails on them",
		"give every public class a cost (COALESCE, or leave such classes out of catalogue_classes)"},
	"ids on more than one row": {"a build fails on them",
		"keep one row per id (a join that repeats rows: join on a key that matches one row, or leave the extra table out)"},
	"ids on more than one row (each counted as a seat taken)": {"the seats left are published too few",
		"keep one row per registration (a join that repeats rows: join on a key that matches one row, or leave the extra table out)"},
	"public classes whose room_id is no row of catalogue_rooms": {"they are published without their room and location",
		"keep in catalogue_rooms every room a public class is in (a retired room is still where its classes meet), " +
			"or map the room_id of a class whose room it leaves out as NULL (no room assigned)"},
}

// remedy is what a problem of a rowsCheck does (why) and how to fix it.
type remedy struct{ why, fix string }

// rowsCheck is a check whose query lists what fails it, one row (read by problem) a problem:
// with none it passes, saying ok; with some it fails, naming them, why, and fix, or each
// one's own, from remedies by the problem's text.
type rowsCheck struct {
	name, query, why, fix, ok string
	remedies                  map[string]remedy
}

func (r rowsCheck) run(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: r.name}
	rows, err := conn.Query(ctx, r.query)
	if err != nil {
		return unreadable(c, err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[problem])
	switch {
	case err != nil:
		return unreadable(c, err)
	case len(found) == 0:
		c.OK, c.Detail = true, r.ok
		return c
	}
	var bad, fixes []string
	for _, p := range found {
		rm, ok := r.remedies[p.What]
		if !ok {
			bad = append(bad, p.String())
			continue
		}
		bad = append(bad, p.String()+": "+rm.why)
		if !slices.Contains(fixes, rm.fix) {
			fixes = append(fixes, rm.fix)
		}
	}
	c.Detail, c.Fix = strings.Join(bad, "; ")+r.why, r.fix
	if len(fixes) > 0 {
		c.Fix = "in the mapping, " + strings.Join(fixes, "; ")
	}
	return c
}

// unreadable fails c on err, from a query of the views whose columns are as the contract
// needs (the columns checks come first).
func unreadable(c Check, err error) Check {
	c.Detail = "cannot read the mapping: " + err.Error()
	c.Fix = "fix the mapping (see the columns above), then run builder doctor again"
	return c
}

// problem is a row of servedValues, badIDs or hiddenByFilter: a view, a problem, how many
// rows have it and the smallest id among them, nil when every one has a NULL id.
type problem struct {
	Rel, What string
	N         int64
	First     *int64
}

func (p problem) String() string {
	if p.First == nil {
		return fmt.Sprintf("%s: %d %s", p.Rel, p.N, p.What)
	}
	return fmt.Sprintf("%s: %d %s (id %d first)", p.Rel, p.N, p.What, *p.First)
}

// checkTokens checks that at least one API token can call the edge.
func checkTokens(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "API tokens"}
	var n int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM api_tokens WHERE revoked_at IS NULL`).Scan(&n); err != nil {
		c.Detail = "cannot read api_tokens: " + err.Error()
		c.Fix = "run builder migrate, which creates api_tokens"
		return c
	}
	if n == 0 {
		c.Detail = "no active API token: the edge will refuse every request"
		c.Fix = `builder token create --name "the application's name"`
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%d active", n)
	return c
}

// checkWebhookFeeds checks that webhook messages name the feeds by absolute URLs, which a
// partner can fetch (D41, and D37's absolute next): without edge.public_url on the builder
// they carry paths under edge.base_path, and a partner's fetch of one fails.
func checkWebhookFeeds(ctx context.Context, conn *pgx.Conn, publicURL string) Check {
	c := Check{Name: "webhook feed URLs"}
	var n int64
	err := conn.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE disabled_at IS NULL`).Scan(&n)
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &pg) && pg.Code == "42P01":
		// builder serve runs without webhooks then, and says so.
		c.OK, c.Detail = true, "no webhook tables (builder migrate makes them): no webhooks are sent"
		return c
	case err != nil:
		c.Detail = "cannot read webhook_endpoints: " + err.Error()
		c.Fix = "let database.url's role read webhook_endpoints"
		return c
	}
	switch {
	case n == 0:
		c.OK, c.Detail = true, "no enabled webhook endpoint"
	case publicURL == "":
		c.Detail = fmt.Sprintf("%d enabled webhook endpoints get messages whose feed URLs are paths, which partners cannot fetch: edge.public_url is not set", n)
		c.Fix = "set edge.public_url for the builder to the URL partners reach the edges at, such as https://api.example.com"
	default:
		c.OK, c.Detail = true, fmt.Sprintf("%d enabled webhook endpoints; messages name the feeds under %s", n, publicURL)
	}
	return c
}

// lines runs query on conn and returns each row as line makes it: the items of a check's
// detail.
func lines(ctx context.Context, conn *pgx.Conn, line pgx.RowToFunc[string], query string, args ...any) ([]string, error) {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, line)
}

// failed returns the checks of cs that failed.
func failed(cs []Check) []Check {
	var f []Check
	for _, c := range cs {
		if !c.OK {
			f = append(f, c)
		}
	}
	return f
}

// ErrContract marks a mapping whose views lack a column the contract needs or give one a type
// it does not accept.
var ErrContract = errors.New("the mapping's views do not give the columns the catalogue reads")

// CheckContract returns an error wrapping ErrContract naming each view whose columns fail
// doctor's "columns of" check, read on conn: builder run and serve call it before a build,
// which would otherwise read such a view wrongly (a timestamptz start_date as its UTC date)
// or fail on it with a scan error.
func CheckContract(ctx context.Context, conn *pgx.Conn) error {
	var bad []string
	for _, c := range failed(checkColumns(ctx, conn)) {
		bad = append(bad, c.Name+": "+c.Detail)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s (builder doctor says how to fix each)", ErrContract, strings.Join(bad, "; "))
	}
	return nil
}
