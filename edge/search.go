package edge

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/templates"
)

// searcher runs the live class search (spec 4.3, 4.4) against the read replica: one query
// per page (templates.Search), plus templates.Count only for a page past the last, and
// keeps the responses for edge.search_cache (searchcache.go).
type searcher struct {
	s         *Server
	pool      *pgxpool.Pool
	searchSQL string
	countSQL  string
	timeout   time.Duration
	bufs      sync.Pool    // *[]byte response buffers, reused across requests when not cached
	cache     *searchCache // nil: edge.search_cache is 0, every search queries
}

func newSearcher(s *Server) *searcher {
	return &searcher{
		s:         s,
		pool:      s.opts.Replica,
		searchSQL: s.opts.Templates.SQL(templates.Search),
		countSQL:  s.opts.Templates.SQL(templates.Count),
		timeout:   s.cfg.SearchTimeout,
		bufs:      sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }},
		cache:     newSearchCache(s.cfg.SearchCache, s.now, s.opts.Registry),
	}
}

// handleSearch serves GET /public/classes and GET /public/course/:id/classes. A path id that
// is not a positive integer is 404 (D15); an unknown or non-public course is simply a course
// with no matching class, hence the empty result (spec 4.4).
func (h *searcher) handleSearch(c echo.Context) error {
	var courseID int64
	if hasParam(c, "id") {
		id, ok := parseID(c.Param("id"))
		if !ok {
			return fail(ErrNotFound, "Course not found.")
		}
		courseID = id
	}
	p, err := parseSearchParams(c.QueryParams())
	if err != nil {
		return err
	}
	p.courseID = courseID
	// One "today" for the cache key and the query, also across midnight.
	today := h.s.opts.Config.Today(h.s.now())
	ctx := c.Request().Context()

	if h.cache != nil {
		e, err := h.cache.get(ctx, searchKey(today, p), func(ctx context.Context) ([]byte, error) {
			return h.timedPage(ctx, nil, today, p)
		})
		if err != nil {
			return unavailable(err)
		}
		return h.write(c, e.body, e.gzipped)
	}
	bp := h.bufs.Get().(*[]byte)
	defer h.bufs.Put(bp)
	body, err := h.timedPage(ctx, (*bp)[:0], today, p)
	if err != nil {
		return unavailable(err)
	}
	*bp = body
	return h.write(c, body, nil)
}

// unavailable is the 503 of a search that failed in the replica.
func unavailable(err error) error {
	return failCause(ErrUnavailable, err, "The class search is temporarily unavailable. Please try again shortly.")
}

// timedPage is page, its duration recorded in the search metric.
func (h *searcher) timedPage(ctx context.Context, buf []byte, today time.Time, p searchParams) ([]byte, error) {
	began := time.Now()
	body, err := h.page(ctx, buf, today, p)
	h.s.metrics.observeSearch(time.Since(began))
	return body, err
}

// hasParam reports whether the matched route has the path parameter name.
func hasParam(c echo.Context, name string) bool {
	for _, n := range c.ParamNames() {
		if n == name {
			return true
		}
	}
	return false
}

// page runs the search for p on the day today within the search timeout and appends the
// response body {"data":[...],"total":N,"last_page":N} (D10) to buf.
func (h *searcher) page(ctx context.Context, buf []byte, today time.Time, p searchParams) ([]byte, error) {
	if !utf8.ValidString(p.search) || strings.IndexByte(p.search, 0) >= 0 {
		// No course name holds a NUL or invalid UTF-8, so nothing matches (D11); PostgreSQL
		// would refuse the text, and the client would get a 503 for its own input.
		return append(buf, `{"data":[],"total":0,"last_page":1}`...), nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	args := searchArgs(today, p)
	rows, err := h.pool.Query(ctx, h.searchSQL, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	buf = append(buf, `{"data":[`...)
	var r searchRow
	var total, n int64
	for rows.Next() {
		if err := rows.Scan(&r.id, &r.courseID, &r.course, &r.start, &r.end, &r.typ,
			&r.city, &r.state, &r.cost, &r.seats, &total); err != nil {
			return nil, err
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = r.appendJSON(buf)
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if n == 0 && p.offset > 0 {
		// Past the last page no row carries the total; ask for it alone (D9).
		if err := h.pool.QueryRow(ctx, h.countSQL, args[:6]...).Scan(&total); err != nil {
			return nil, err
		}
	}
	buf = append(buf, `],"total":`...)
	buf = strconv.AppendInt(buf, total, 10)
	buf = append(buf, `,"last_page":`...)
	buf = strconv.AppendInt(buf, lastPage(total, p.limit), 10)
	return append(buf, '}'), nil
}

// searchArgs are the arguments $1..$8 of templates.Search; the first six are those of
// templates.Count. An absent filter is NULL.
func searchArgs(today time.Time, p searchParams) []any {
	args := []any{today, nil, nil, nil, nil, nil, p.limit, p.offset}
	for i, d := range []time.Time{p.start, p.end, p.date} {
		if !d.IsZero() {
			args[1+i] = d
		}
	}
	if p.search != "" {
		args[4] = escapeLike(p.search)
	}
	if p.courseID != 0 {
		args[5] = p.courseID
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

// searchRow is one class of a search page as templates.Search returns it.
type searchRow struct {
	id, courseID int64
	course, typ  string
	start, end   time.Time
	city, state  pgtype.Text
	cost         int64
	seats        pgtype.Int8 // available seats; NULL when uncapped
}

// appendJSON appends the class as a search item (spec 4.3, D29), fields in the order of the
// spec: id, course_id (decimal strings), course, start, end, type, city, state, schedule
// (always null), cost, full, available_seats.
func (r *searchRow) appendJSON(b []byte) []byte {
	b = append(b, `{"id":"`...)
	b = strconv.AppendInt(b, r.id, 10)
	b = append(b, `","course_id":"`...)
	b = strconv.AppendInt(b, r.courseID, 10)
	b = append(b, `","course":`...)
	b = appendJSONString(b, r.course)
	b = append(b, `,"start":"`...)
	b = r.start.AppendFormat(b, time.DateOnly)
	b = append(b, `","end":"`...)
	b = r.end.AppendFormat(b, time.DateOnly)
	b = append(b, `","type":`...)
	b = appendJSONString(b, r.typ)
	b = append(b, `,"city":`...)
	b = appendNullString(b, r.city)
	b = append(b, `,"state":`...)
	b = appendNullString(b, r.state)
	b = append(b, `,"schedule":null,"cost":`...)
	b = strconv.AppendInt(b, r.cost, 10)
	// full: capped and no seat left (D6); an uncapped class is never full.
	if r.seats.Valid && r.seats.Int64 <= 0 {
		b = append(b, `,"full":true,"available_seats":`...)
	} else {
		b = append(b, `,"full":false,"available_seats":`...)
	}
	if r.seats.Valid {
		b = strconv.AppendInt(b, max(r.seats.Int64, 0), 10)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

func appendNullString(b []byte, s pgtype.Text) []byte {
	if !s.Valid {
		return append(b, "null"...)
	}
	return appendJSONString(b, s.String)
}
