// Command searchmix writes the class-search mix of make bench twice: as request paths for
// wrk (through the edge) and as pgbench scripts running the edge's own search SQL
// (templates/search.sql) with the same parameters, so that the two sides do the same work.
//
//	searchmix -out DIR [-cases 100] [-base /api/v2]
//
// The mix is drawn with a fixed seed from the seeded data: name fragments of public courses,
// start/end/date filters where upcoming classes are, pages 1-5, and per-course searches. It
// writes DIR/paths.txt (one path a line), DIR/case-NNN.sql (one pgbench script per search)
// and DIR/pgbench.args (the pgbench arguments, one a line: -f FILE@1 for each script, and -D
// NAME=VALUE for each parameter). Parameters stay bound parameters in pgbench (-M prepared
// turns each :variable into one), as they are in the edge, so both get the same plans; an
// absent filter, which pgbench variables cannot hold (they have no NULL), is written into the
// script as NULL.
//
// The database and "today" come from the usual configuration (CATALOGUE_DATABASE_URL,
// CATALOGUE_TIMEZONE).
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

var (
	//go:embed courses.sql
	coursesSQL string
	//go:embed dates.sql
	datesSQL string
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "searchmix:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("searchmix", flag.ContinueOnError)
	out := fs.String("out", "", "folder to write the mix to")
	n := fs.Int("cases", 100, "number of searches in the mix")
	base := fs.String("base", "/api/v2", "base path the edge serves under")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *n < 1 {
		return errors.New("-out is required and -cases must be at least 1")
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, cfg.ReplicaURL())
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer conn.Close(ctx)
	today := cfg.Today(time.Now())
	d, err := readData(ctx, conn, today)
	if err != nil {
		return err
	}
	searchSQL := templates.MustDefault().SQL(templates.Search)
	r := rand.New(rand.NewPCG(1, 1))
	cases := make([]search, *n)
	for i := range cases {
		if cases[i], err = d.drawHit(ctx, conn, searchSQL, r); err != nil {
			return err
		}
	}
	return write(*out, *base, searchSQL, today, cases)
}

// drawHit draws a search and runs it once. A page past the last is moved to the first: on
// an empty page the edge runs a second query (templates/count.sql) for the total, which
// pgbench would not, and the mix must be the same work on both sides.
func (d *data) drawHit(ctx context.Context, conn *pgx.Conn, searchSQL string, r *rand.Rand) (search, error) {
	s := d.draw(r)
	for {
		rows, _ := conn.Query(ctx, searchSQL, s.sqlArgs(d.today)...)
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			return s, fmt.Errorf("run templates/search.sql for %s: %w", s.path(""), err)
		}
		if n > 0 || s.Page == 1 {
			return s, nil
		}
		s.Page = 1
	}
}

// course is a public course the mix can search by name or by id.
type course struct {
	id   int64
	name string
}

// data is what the mix is drawn from.
type data struct {
	today        time.Time
	courses      []course
	first, last  time.Time // start dates of the upcoming public classes
	upcomingDays int
}

func readData(ctx context.Context, conn *pgx.Conn, today time.Time) (*data, error) {
	rows, _ := conn.Query(ctx, coursesSQL)
	courses, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (course, error) {
		var c course
		return c, row.Scan(&c.id, &c.name)
	})
	if err != nil {
		return nil, fmt.Errorf("read courses: %w", err)
	}
	if len(courses) == 0 {
		return nil, errors.New("read courses: no public course; is the database seeded?")
	}
	d := &data{today: today, courses: courses}
	var first, last *time.Time
	if err := conn.QueryRow(ctx, datesSQL, today).Scan(&first, &last); err != nil {
		return nil, fmt.Errorf("read class dates: %w", err)
	}
	if first == nil || last == nil {
		return nil, errors.New("read class dates: no upcoming public class; is the database seeded?")
	}
	d.first, d.last = first.UTC(), last.UTC()
	d.upcomingDays = int(d.last.Sub(d.first).Hours()/24) + 1
	return d, nil
}

// draw returns one search. The weights say what a catalogue's search boxes and calendars
// send most: name fragments, the plain upcoming list paged, date filters, a course's classes.
func (d *data) draw(r *rand.Rand) search {
	day := func(within int) time.Time { return d.first.AddDate(0, 0, r.IntN(max(1, within))) }
	s := search{Page: 1}
	switch k := r.IntN(20); {
	case k < 4: // the upcoming list, paged
		s.Page = 1 + r.IntN(5)
	case k < 9: // a name fragment
		s.Search = d.fragment(r)
		s.Page = 1 + r.IntN(2)
	case k < 12: // starting on or after a date
		s.Start = day(d.upcomingDays / 2)
		s.Page = 1 + r.IntN(5)
	case k < 14: // running on a date
		s.Date = day(d.upcomingDays)
	case k < 16: // starting within a month
		s.Start = day(d.upcomingDays)
		s.End = s.Start.AddDate(0, 1, 0)
		s.Page = 1 + r.IntN(3)
	case k < 19: // one course's classes
		s.CourseID = d.courses[r.IntN(len(d.courses))].id
		s.Page = 1 + r.IntN(2)
	default: // a name fragment from a date
		s.Search = d.fragment(r)
		s.Start = day(d.upcomingDays / 2)
	}
	if r.IntN(10) == 0 {
		s.Limit = 50
	}
	return s
}

// fragment returns what someone types into a search box: mostly the start of a word of a
// course name, sometimes a piece from its middle, 3 to 6 letters, lower case.
func (d *data) fragment(r *rand.Rand) string {
	for range 100 {
		words := strings.FieldsFunc(d.courses[r.IntN(len(d.courses))].name, func(c rune) bool {
			return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
		})
		if len(words) == 0 {
			continue
		}
		w := strings.ToLower(words[r.IntN(len(words))])
		if len(w) < 3 {
			continue
		}
		n := min(len(w), 3+r.IntN(4))
		at := 0
		if r.IntN(10) < 3 {
			at = r.IntN(len(w) - n + 1)
		}
		return w[at : at+n]
	}
	return strings.ToLower(d.courses[0].name)
}

func write(dir, base, searchSQL string, today time.Time, cases []search) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	body, nparams, err := scriptBody(searchSQL)
	if err != nil {
		return err
	}
	var paths, pgArgs []string
	for i, s := range cases {
		paths = append(paths, s.path(base))
		args := s.sqlArgs(today)
		if len(args) != nparams {
			return fmt.Errorf("templates/search.sql takes %d arguments but the mix passes %d: update sqlArgs in scripts/bench/searchmix", nparams, len(args))
		}
		script, defs := pgbenchScript(body, fmt.Sprintf("c%d_", i+1), args)
		file := filepath.Join(dir, fmt.Sprintf("case-%03d.sql", i+1))
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			return fmt.Errorf("write pgbench script: %w", err)
		}
		pgArgs = append(pgArgs, "-f", file+"@1")
		for _, def := range defs {
			pgArgs = append(pgArgs, "-D", def)
		}
	}
	files := map[string][]string{"paths.txt": paths, "pgbench.args": pgArgs}
	for name, lines := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	fmt.Printf("searchmix: %d searches written to %s\n", len(cases), dir)
	return nil
}
