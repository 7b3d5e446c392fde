package search

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/trainingco/catalogue/edge/gzipbody"
	"github.com/trainingco/catalogue/edge/telemetry"
)

// cacheEntries and cacheBytes bound the search cache. An entry is one page of at most 50
// classes (about 20 KB with its gzip copy at most, a few KB usually) and a key of at most a
// few hundred bytes (MaxSearch); a catalogue's pages repeat far fewer distinct searches
// than this within edge.search_cache. cacheBytes counts each entry's key and twice its
// body (its gzip copy, made on demand, is smaller), so that no mix of requests makes the
// cache hold more, whatever the entry count.
const (
	cacheEntries = 1024
	cacheBytes   = 32 << 20
)

// cache keeps the responses of live searches for edge.search_cache, so that the
// searches a catalogue's pages repeat (a calendar's month, page 1 of a filter) query the
// replica once per period instead of once per visitor: one core of PostgreSQL counts the
// exact total of a broad search in milliseconds, which sixteen concurrent visitors turn
// into a queue. Concurrent requests for an entry that is missing share one query
// (singleflight). Keys are the parsed, normalized parameters and "today" (cacheKey), never
// the raw query string. Only successful responses are kept: an error reaches the requests
// that shared its query and no later one.
//
// An entry asked for in the last fifth of its life is refreshed ahead, in the background,
// while it is still served: a search that visitors keep asking for never expires in front
// of them, so they do not queue behind its query. Without this, every entry a page filled
// at the same moment expires at the same moment, and the queries of all of them land on
// the replica at once, every period (make bench: p99 28–95 ms at 16 clients, against
// 2–3 ms between expiries). At most RefreshSlots refreshes run at a time, so that they
// trickle rather than burst; a hit that finds no free slot leaves it to a later one. No
// response is ever older than ttl: an entry not refreshed in time expires as before.
type cache struct {
	ttl     time.Duration
	ahead   time.Duration // an entry is refreshed when asked for this close to expiry
	now     func() time.Time
	entries *lru.Cache[string, *entry]
	addMu   sync.Mutex // serialises adds, so that held is exact
	held    int        // bytes the entries count for (entryBytes); under addMu or in an eviction
	flights singleflight.Group
	slots   chan struct{} // one per refresh running in the background

	hits, misses, shared, refreshes prometheus.Counter
	waiting                         prometheus.Gauge
}

// RefreshSlots bounds the refreshes running at a time: each is one query on the replica,
// which the requests that need an answer now should find mostly idle.
const RefreshSlots = 2

// entry is one cached response: the JSON body, when it stops being fresh, and its
// gzip encoding, made the first time a client asks for it.
type entry struct {
	body    []byte
	expires time.Time
	refresh time.Time   // from then on, a hit refreshes the entry ahead of its expiry
	started atomic.Bool // a refresh of this entry has begun: one per entry
	gzOnce  sync.Once
	gz      []byte
}

// gzipped returns the gzip encoding of the body, compressing it on first use.
func (e *entry) gzipped() []byte {
	e.gzOnce.Do(func() { e.gz = gzipbody.Append(nil, e.body) })
	return e.gz
}

// newCache returns a cache keeping responses for ttl by the clock now, with its
// counters registered on reg; nil when ttl is 0 (edge.search_cache: 0 disables it).
func newCache(ttl time.Duration, now func() time.Time, reg *prometheus.Registry) *cache {
	if ttl <= 0 {
		return nil
	}
	c := &cache{}
	// Evictions happen inside Add and RemoveOldest, which c.add calls under addMu.
	entries, err := lru.NewWithEvict(cacheEntries, func(k string, e *entry) { c.held -= entryBytes(k, e) })
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	requests := telemetry.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogue_edge_search_cache_requests_total",
		Help: "Live searches by how the search cache answered them: hit (a fresh cached response), miss (ran the query), shared (waited for the same query another request ran), refresh (a hit that also started refreshing its entry ahead of expiry).",
	}, []string{"result"}))
	*c = cache{
		ttl: ttl, ahead: ttl / 5, now: now, entries: entries,
		slots:     make(chan struct{}, RefreshSlots),
		hits:      requests.WithLabelValues("hit"),
		misses:    requests.WithLabelValues("miss"),
		shared:    requests.WithLabelValues("shared"),
		refreshes: requests.WithLabelValues("refresh"),
		waiting: telemetry.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "catalogue_edge_search_cache_waiting",
			Help: "Live searches waiting for a query of the search cache, their own or a shared one.",
		})),
	}
	return c
}

// get returns the response for key: the cached one while it is fresh, else the one fill
// renders, run once for every concurrent caller of key. fill runs without ctx's
// cancellation (a client that goes away must not fail the others waiting on its query; the
// search timeout still bounds it); ctx bounds only this caller's wait. A fresh entry close
// to expiry is also refreshed in the background (refreshAhead).
func (c *cache) get(ctx context.Context, key string, fill func(context.Context) ([]byte, error)) (*entry, error) {
	if e, ok := c.fresh(key); ok {
		c.hits.Inc()
		if !c.now().Before(e.refresh) {
			c.refreshAhead(ctx, key, e, fill)
		}
		return e, nil
	}
	c.waiting.Inc()
	defer c.waiting.Dec()
	ran := false // set only in the caller whose function the flight runs
	ch := c.flights.DoChan(key, func() (any, error) {
		ran = true
		return c.load(ctx, key, fill, true)
	})
	select {
	case r := <-ch:
		if !ran {
			c.shared.Inc()
		}
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*entry), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refreshAhead starts refreshing e, the entry of key, as key's flight in the background,
// unless a refresh of e has begun already or every slot is taken. Requests for key that
// find e expired before the refresh ends wait for it, as for any flight of key.
func (c *cache) refreshAhead(ctx context.Context, key string, e *entry, fill func(context.Context) ([]byte, error)) {
	if e.started.Load() {
		return
	}
	select {
	case c.slots <- struct{}{}:
	default:
		return // busy: a later hit of e tries again
	}
	if !e.started.CompareAndSwap(false, true) {
		<-c.slots
		return
	}
	c.refreshes.Inc()
	ch := c.flights.DoChan(key, func() (any, error) { return c.load(ctx, key, fill, false) })
	go func() {
		// Its error is dropped: e stays until it expires, and a request after that runs the
		// query again and answers with the error if it persists.
		<-ch
		<-c.slots
	}()
}

// load is the body of key's flight: it runs fill and caches its response, unless an entry
// not yet due for refresh is there already (a flight that ended since its caller looked
// filled it). For a miss (not a refresh) it counts a hit or a miss.
func (c *cache) load(ctx context.Context, key string, fill func(context.Context) ([]byte, error), miss bool) (*entry, error) {
	if e, ok := c.entries.Get(key); ok && c.now().Before(e.refresh) {
		if miss {
			c.hits.Inc()
		}
		return e, nil
	}
	if miss {
		c.misses.Inc() // counted here: the query runs even if its caller goes away
	}
	began := c.now()
	body, err := fill(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	expires := began.Add(c.ttl)
	e := &entry{body: body, expires: expires, refresh: expires.Add(-c.ahead)}
	c.add(key, e)
	return e, nil
}

// add caches e under key and then drops the least recently used entries while they take
// more than cacheBytes (the one just added stays, whatever its size).
func (c *cache) add(key string, e *entry) {
	c.addMu.Lock()
	defer c.addMu.Unlock()
	c.entries.Remove(key) // a refreshed entry: its bytes go before the new ones count
	c.entries.Add(key, e)
	c.held += entryBytes(key, e)
	for c.held > cacheBytes && c.entries.Len() > 1 {
		c.entries.RemoveOldest()
	}
}

// entryBytes is what the entry of key counts for against cacheBytes.
func entryBytes(key string, e *entry) int { return len(key) + 2*len(e.body) }

// fresh returns the entry of key if it is cached and has not expired. Freshness is measured
// from the start of the query that filled it.
func (c *cache) fresh(key string) (*entry, bool) {
	e, ok := c.entries.Get(key)
	if !ok || !c.now().Before(e.expires) {
		return nil, false
	}
	return e, true
}

// cacheKey is the cache key of a search: "today" (the same parameters mean other classes
// on another day) and the parsed parameters, so that requests that differ only in how they
// spell them (limit=51 and limit=50, 1-5-2027 and 01-05-2027, a trimmed search, parameter
// order, unknown parameters) share an entry. The search text is kept as sent, case
// included: the database matches it case-insensitively by its own locale's rules, which
// folding it here could contradict (D11). It comes last, so that its bytes cannot be taken
// for a separator.
func cacheKey(today time.Time, p Params) string {
	b := make([]byte, 0, 80+len(p.Search))
	b = today.AppendFormat(b, time.DateOnly)
	for _, d := range []time.Time{p.Start, p.End, p.Date} {
		b = append(b, '|')
		if !d.IsZero() {
			b = d.AppendFormat(b, time.DateOnly)
		}
	}
	for _, n := range []int64{p.CourseID, p.Limit, p.Offset} {
		b = append(b, '|')
		b = strconv.AppendInt(b, n, 10)
	}
	b = append(b, '|')
	b = append(b, p.Search...)
	return string(b)
}
