// Package search runs the live class search (spec 4.3, 4.4) against the read replica: it
// parses the search parameters, finds the page (in the index of edge/search/index, reading
// only the page's classes from the replica, or entirely in the replica), encodes it as
// JSON, and keeps the responses for a short while (Options.CacheTTL) so that searches
// repeated by many visitors query once.
package search

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainingco/catalogue/edge/gzipbody"
	"github.com/trainingco/catalogue/templates"
)

// Options are a Searcher's dependencies and settings. Pool and Templates are required.
type Options struct {
	Pool      *pgxpool.Pool  // the read replica
	Templates *templates.Set // templates.Search, SearchIndex and SearchPage
	Timeout   time.Duration  // edge.search_timeout: the deadline of one search's queries
	// CacheTTL is edge.search_cache: how long a response is reused; 0 disables the cache.
	CacheTTL time.Duration
	// Index is edge.search_index: keep the index of edge/search/index (loaded by Start).
	Index    bool
	Now      func() time.Time     // the cache's clock; nil: time.Now
	Registry *prometheus.Registry // the cache's and index's metrics are registered here; nil: a new one
	Logger   *slog.Logger         // the index's loads; nil: slog.Default()
	// Observe, when set, is given the time each search spent in the replica.
	Observe func(time.Duration)
}

// Searcher runs searches: one query per page, templates.SearchPage for a page found in the
// index (indexed.go) or else templates.Search, and keeps the responses for
// Options.CacheTTL (cache.go).
type Searcher struct {
	opts      Options
	searchSQL string  // one page of classes, each row with the total
	index     *finder // nil: Options.Index is false
	cache     *cache  // nil: CacheTTL is 0, every search queries
}

// New returns a Searcher; it does not connect until Start or the first search.
func New(opts Options) *Searcher {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Searcher{opts: opts, searchSQL: opts.Templates.SQL(templates.Search),
		cache: newCache(opts.CacheTTL, opts.Now, opts.Registry)}
	if opts.Index {
		s.index = newFinder(opts)
	}
	return s
}

// firstLoadWait is how long Start waits for the index: its load takes tens of milliseconds
// at 100,000 classes; a replica that is down or slow must not hold the edge's start.
const firstLoadWait = 10 * time.Second

// Start loads the index, waiting for it at most firstLoadWait, and keeps it current in the
// background until ctx is done. Searches run in the replica alone while there is no index.
func (s *Searcher) Start(ctx context.Context) {
	if s.index != nil {
		s.index.keeper.Start(ctx, firstLoadWait)
		// The load's garbage (the rows as decoded) goes back to the OS now, as the
		// snapshot's does (edge/docstore), so that the edge's memory has settled once it
		// is ready; later loads reuse the room.
		debug.FreeOSMemory()
	}
}

// Result is the response to one search: its JSON body and, on demand, its gzip encoding.
type Result struct {
	body  []byte
	entry *entry // the cached response, which keeps its gzip encoding; nil when not cached
}

// Body is the response body {"data":[...],"total":N,"last_page":N} (D10).
func (r Result) Body() []byte { return r.body }

// Gzip returns Body compressed: made once for a cached response, here for any other.
func (r Result) Gzip() []byte {
	if r.entry != nil {
		return r.entry.gzipped()
	}
	return gzipbody.Append(nil, r.body)
}

// Search answers p on the day today (D1). An error means the replica failed or was too
// slow: the client should try again later.
func (s *Searcher) Search(ctx context.Context, today time.Time, p Params) (Result, error) {
	if matchesNothing(p.Search) {
		return Result{body: emptyPage}, nil
	}
	if s.cache == nil {
		body, err := s.timedPage(ctx, today, p)
		return Result{body: body}, err
	}
	e, err := s.cache.get(ctx, cacheKey(today, p), func(ctx context.Context) ([]byte, error) {
		return s.timedPage(ctx, today, p)
	})
	if err != nil {
		return Result{}, err
	}
	return Result{body: e.body, entry: e}, nil
}

// MaxSearch is the longest search term, in characters, that can match: course names are
// far shorter. A longer term matches nothing (D11), and is answered so without a query, a
// cache entry or a replica connection held while PostgreSQL scans for a megabyte of text.
const MaxSearch = 256

// Empty is the result of a search that matches nothing (D10), for a query the caller knows
// matches nothing without asking.
func Empty() Result { return Result{body: emptyPage} }

// emptyPage is the response of a search that matches nothing (D10).
var emptyPage, _ = json.Marshal(page{Data: []item{}, LastPage: 1})

// matchesNothing reports a term no course name can hold (D11): longer than MaxSearch
// characters, or with a NUL or invalid UTF-8, which PostgreSQL would refuse (the client
// would get a 503 for its own input).
func matchesNothing(term string) bool {
	if len(term) > utf8.UTFMax*MaxSearch || len(term) > MaxSearch && utf8.RuneCountInString(term) > MaxSearch {
		return true
	}
	return !utf8.ValidString(term) || strings.IndexByte(term, 0) >= 0
}

// Caching reports whether responses are reused (Options.CacheTTL is not 0).
func (s *Searcher) Caching() bool { return s.cache != nil }

// Refreshing is the number of cached responses being refreshed in the background.
func (s *Searcher) Refreshing() int {
	if s.cache == nil {
		return 0
	}
	return len(s.cache.slots)
}

// timedPage is page, its duration given to Options.Observe.
func (s *Searcher) timedPage(ctx context.Context, today time.Time, p Params) ([]byte, error) {
	began := time.Now()
	body, err := s.page(ctx, today, p)
	if s.opts.Observe != nil {
		s.opts.Observe(time.Since(began))
	}
	return body, err
}

// page runs the search for p on the day today within the search timeout and returns the
// response body: from the index when it can answer, else in the replica alone.
func (s *Searcher) page(ctx context.Context, today time.Time, p Params) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	if s.index != nil {
		if pg, ok, err := s.index.page(ctx, today, p); err != nil || ok {
			if err != nil {
				return nil, err
			}
			return encode(&pg), nil
		}
	}
	pg := page{Data: []item{}}
	// An unnamed statement: PostgreSQL plans it at each run for the filters given (a NULL
	// argument turns one off, and the plan must use the index the others need), where a
	// prepared statement would switch to one generic plan for all after five runs.
	rows, err := s.opts.Pool.Query(ctx, s.searchSQL, append([]any{pgx.QueryExecModeCacheDescribe}, queryArgs(today, p)...)...)
	if err != nil {
		return nil, err
	}
	if err := scanPage(rows, &pg, func(r *row) []any { return append(r.columns(), &pg.Total) }); err != nil {
		return nil, err
	}
	pg.LastPage = lastPage(pg.Total, p.Limit)
	return encode(&pg), nil
}

// encode returns pg as JSON, in a buffer about its size.
func encode(pg *page) []byte {
	return appendPage(make([]byte, 0, 64+320*len(pg.Data)), pg)
}

// queryArgs are the arguments $1..$8 of templates.Search. An absent filter is NULL.
func queryArgs(today time.Time, p Params) []any {
	args := []any{today, nil, nil, nil, nil, nil, p.Limit, p.Offset}
	for i, d := range []time.Time{p.Start, p.End, p.Date} {
		if !d.IsZero() {
			args[1+i] = d
		}
	}
	if p.Search != "" {
		args[4] = escapeLike(p.Search)
	}
	if p.CourseID != 0 {
		args[5] = p.CourseID
	}
	return args
}

// lastPage is max(1, ceil(total/limit)) (D10).
func lastPage(total, limit int64) int64 {
	if total <= 0 {
		return 1
	}
	return (total-1)/limit + 1
}
