package search

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainingco/catalogue/edge/search/index"
	"github.com/trainingco/catalogue/edge/telemetry"
	"github.com/trainingco/catalogue/templates"
)

// loadTimeout bounds one load of the index: a read of every public class's id and dates.
const loadTimeout = time.Minute

// finder answers searches from the index (edge/search/index): it finds the page's class ids
// and the total there, and reads only those classes from the replica, with the version of
// the data the index holds in the same statement (templates.SearchPage). When the replica
// is at another version, the page is not used: the search runs in the replica alone, and a
// new index is loaded. A search on a page the index found thus costs the replica a few key
// lookups per class, where counting its matches in the replica took up to tens of
// milliseconds (make bench, long tail).
type finder struct {
	keeper  *index.Keeper
	pool    *pgxpool.Pool
	pageSQL string

	used, outdated, bypassed, absent prometheus.Counter
}

func newFinder(opts Options) *finder {
	searches := telemetry.Register(opts.Registry, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogue_edge_search_index_searches_total",
		Help: "Live searches by what the search index did for them: used (it found the page), outdated (the replica had changed since it was read: the search ran in the replica and the index is being read again), bypassed (a search text it leaves to the replica: not ASCII), absent (not loaded yet).",
	}, []string{"result"}))
	loads := telemetry.Register(opts.Registry, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogue_edge_search_index_loads_total",
		Help: "Loads of the search index from the replica, by result (ok, error).",
	}, []string{"result"}))
	f := &finder{pool: opts.Pool, pageSQL: opts.Templates.SQL(templates.SearchPage),
		used: searches.WithLabelValues("used"), outdated: searches.WithLabelValues("outdated"),
		bypassed: searches.WithLabelValues("bypassed"), absent: searches.WithLabelValues("absent")}
	indexSQL := opts.Templates.SQL(templates.SearchIndex)
	loaded, failed := loads.WithLabelValues("ok"), loads.WithLabelValues("error")
	f.keeper = index.NewKeeper(func(ctx context.Context) (*index.Index, error) {
		ix, err := load(ctx, opts.Pool, indexSQL)
		if err != nil {
			failed.Inc()
		} else {
			loaded.Inc()
		}
		return ix, err
	}, opts.Logger)
	return f
}

// load reads the index within loadTimeout, which also bounds it in PostgreSQL: the pool's
// statement_timeout is a search's.
func load(ctx context.Context, pool *pgxpool.Pool, sql string) (*index.Index, error) {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("read the search index: %w", err)
	}
	defer tx.Rollback(ctx) // read only: nothing to undo
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = "+strconv.FormatInt(loadTimeout.Milliseconds(), 10)); err != nil {
		return nil, fmt.Errorf("read the search index: %w", err)
	}
	return index.Load(ctx, tx, sql)
}

// page answers p on the day today from the index. ok is false when the index cannot: it is
// not loaded yet, p is a search it leaves to the replica, or the replica has changed since
// it was read; the caller then asks the replica alone.
func (f *finder) page(ctx context.Context, today time.Time, p Params) (pg page, ok bool, err error) {
	ix := f.keeper.Index()
	if ix == nil {
		f.absent.Inc()
		return page{}, false, nil
	}
	var buf [maxLimit]index.Class
	found, total, ok := ix.Page(index.Query{Search: p.Search, CourseID: p.CourseID, Today: today,
		Start: p.Start, End: p.End, Date: p.Date, Limit: p.Limit, Offset: p.Offset}, buf[:0])
	if !ok {
		f.bypassed.Inc()
		return page{}, false, nil
	}
	var ids [maxLimit]int64
	for i, c := range found {
		ids[i] = c.ID
	}
	// A prepared statement with one generic plan for every page: it reads classes by key.
	rows, err := f.pool.Query(ctx, f.pageSQL, ids[:len(found)], ix.Version())
	if err != nil {
		return page{}, false, err
	}
	pg = page{Data: make([]item, 0, len(found)), Total: total, LastPage: lastPage(total, p.Limit)}
	version, err := readLive(rows, found, &pg)
	if err != nil {
		return page{}, false, err
	}
	if version != ix.Version() || len(pg.Data) != len(found) {
		f.outdated.Inc()
		f.keeper.Stale()
		return page{}, false, nil
	}
	f.used.Inc()
	return pg, true, nil
}

// readLive reads the rows of templates.SearchPage for the classes found, in their order,
// and appends each class to pg.Data, what the index holds (course, type, dates) beside what
// is read live (cost, location, seats). It returns the version the rows were read at; it
// stops at a row that is not the next class found, which pg.Data's length then shows.
func readLive(rows pgx.Rows, found []index.Class, pg *page) (version int64, err error) {
	defer rows.Close()
	var live struct {
		id, cost, seats pgtype.Int8
		city, state     pgtype.Text
	}
	for rows.Next() {
		if err := rows.Scan(&version, &live.id, &live.cost, &live.city, &live.state, &live.seats); err != nil {
			return 0, err
		}
		n := len(pg.Data)
		if !live.id.Valid || n == len(found) || found[n].ID != live.id.Int64 {
			continue // no class (an empty page, or another version), or not the one expected
		}
		c := found[n]
		if c.Infinite {
			return 0, fmt.Errorf("class %d: a date at infinity has no YYYY-MM-DD form", c.ID)
		}
		r := row{id: live.id, courseID: pgtype.Int8{Int64: c.CourseID, Valid: true},
			course: pgtype.Text{String: c.Course, Valid: true}, typ: pgtype.Text{String: c.Type, Valid: true},
			start: pgtype.Date{Time: c.Start, Valid: true}, end: pgtype.Date{Time: c.End, Valid: true},
			cost: live.cost, seats: live.seats}
		if c.Type != "Online" { // spec 2.2: no city or state for online classes
			r.city, r.state = live.city, live.state
		}
		it, err := r.item()
		if err != nil {
			return 0, err
		}
		pg.Data = append(pg.Data, it)
	}
	return version, rows.Err()
}
