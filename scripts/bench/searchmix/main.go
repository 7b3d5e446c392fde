// Command searchmix writes a class-search mix of make bench twice: as request paths for wrk
// (through the edge) and as pgbench scripts running the edge's own search SQL
// (templates/search.sql) with the same parameters, so that the two sides do the same work.
//
//	searchmix -out DIR [-mix standard|longtail] [-cases N] [-base /api/v2]
//
// Two mixes are drawn with a fixed seed from the seeded data:
//   - standard (100 searches by default): what a catalogue's own pages repeat: name fragments
//     of public courses, start/end/date filters where upcoming classes are, pages 1-5, and
//     per-course searches; a page past the last is moved to the first.
//   - longtail (1,000 by default): what a search box sends, every search different: a
//     substring of 1 to 8 characters of a public course's name or, one time in ten, one
//     course's classes; half of them with a start, end or date filter; pages 1 to 5; limits
//     10, 25 and 50. Pages past the last stay, as visitors ask for them.
//
// It writes DIR/paths.txt (one path a line) and two sets of pgbench scripts, each script
// choosing one of its searches at random (pgbench takes at most 128 scripts), with their
// arguments in NAME.args (one a line: -f FILE@W for each script, weighted by its number of
// searches so that every search is equally likely, and -D NAME=VALUE for each parameter):
//   - pgbench: templates/search.sql for every search: the whole search in SQL;
//   - edge: what the edge sends for each search: templates/search_page.sql with the ids of
//     the page its index finds (edge/search/index, loaded here from the same database) and
//     the index's version, or search.sql for a search the index leaves to the database.
//     make bench runs this mix with generic plans, as the edge runs search_page.sql: one
//     script runs it for every search, its arguments set by a query of constants first
//     (a client would otherwise prepare and plan a statement per search); search.sql is
//     written with its values in the text, so that it still gets a plan for them.
//
// Parameters stay bound parameters in pgbench (-M prepared turns each :variable into one),
// as they are in the edge, so both get the same plans; an absent filter, which pgbench
// variables cannot hold (they have no NULL), is written into the script as NULL.
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
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/search/index"
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
	mix := fs.String("mix", "standard", "which mix: standard or longtail")
	n := fs.Int("cases", 0, "number of searches in the mix (default: 100 standard, 1,000 longtail)")
	base := fs.String("base", "/api/v2", "base path the edge serves under")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *n < 0 || *mix != "standard" && *mix != "longtail" {
		return errors.New("-out is required, -mix is standard or longtail, -cases is at least 1")
	}
	if *n == 0 {
		*n = map[string]int{"standard": 100, "longtail": 1000}[*mix]
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
	tpl := templates.MustDefault()
	searchSQL := tpl.SQL(templates.Search)
	var cases []search
	if *mix == "longtail" {
		cases, err = d.drawLongTail(rand.New(rand.NewPCG(15, 15)), *n)
	} else {
		cases, err = d.drawStandard(ctx, conn, searchSQL, rand.New(rand.NewPCG(1, 1)), *n)
	}
	if err != nil {
		return err
	}
	ix, err := index.Load(ctx, conn, tpl.SQL(templates.SearchIndex))
	if err != nil {
		return err
	}
	whole, edge := make([]statement, len(cases)), make([]statement, len(cases))
	for i, s := range cases {
		whole[i] = statement{templates.Search, searchSQL, s.sqlArgs(today), variables}
		edge[i] = statement{templates.Search, searchSQL, s.sqlArgs(today), inline}
		if found, _, ok := ix.Page(s.query(today), nil); ok {
			ids := make([]int64, len(found))
			for i, c := range found {
				ids[i] = c.ID
			}
			edge[i] = statement{templates.SearchPage, tpl.SQL(templates.SearchPage), []any{ids, ix.Version()}, gset}
		}
	}
	return write(*out, *base, cases, map[string][]statement{"pgbench": whole, "edge": edge})
}

// drawStandard draws the standard mix: n searches, each run once. A page past the last is
// moved to the first, as when the mix was made (the edge then ran a second query for the
// total), so that the mix stays the one earlier figures were measured on.
func (d *data) drawStandard(ctx context.Context, conn *pgx.Conn, searchSQL string, r *rand.Rand, n int) ([]search, error) {
	cases := make([]search, n)
	for i := range cases {
		s := d.draw(r)
		for {
			rows, _ := conn.Query(ctx, searchSQL, s.sqlArgs(d.today)...)
			classes := 0
			for rows.Next() {
				if rows.RawValues()[0] != nil {
					classes++ // an empty page is one row without a class (NULL id)
				}
			}
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("run templates/search.sql for %s: %w", s.path(""), err)
			}
			if classes > 0 || s.Page == 1 {
				break
			}
			s.Page = 1
		}
		cases[i] = s
	}
	return cases, nil
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
