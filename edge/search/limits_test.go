package search

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCacheBoundedByBytes: however large the responses and keys clients make the cache
// hold, it keeps at most cacheBytes of them, dropping the least recently used first.
func TestCacheBoundedByBytes(t *testing.T) {
	c := newCache(time.Minute, time.Now, prometheus.NewRegistry())
	body := []byte(strings.Repeat("x", 64<<10))
	ctx := context.Background()
	for i := range 1024 {
		key := fmt.Sprintf("%d|%s", i, strings.Repeat("k", 1000))
		if _, err := c.get(ctx, key, func(context.Context) ([]byte, error) { return body, nil }); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for _, k := range c.entries.Keys() {
		if e, ok := c.entries.Peek(k); ok {
			held += len(k) + 2*len(e.body)
		}
	}
	if held > cacheBytes {
		t.Errorf("cache holds %d entries, %d bytes (keys and bodies, gzip counted as a body); want at most %d", c.entries.Len(), held, cacheBytes)
	}
	if c.entries.Len() < cacheBytes/(2*len(body)+1100) {
		t.Errorf("cache holds %d entries; want as many as %d bytes take", c.entries.Len(), cacheBytes)
	}
}

// TestSearchTooLongMatchesNothing: a search term longer than MaxSearch characters, or one
// no course name can hold (a NUL, invalid UTF-8), gets the empty result without a query
// (the Searcher here has no pool: a query would panic) and without a cache entry.
func TestSearchTooLongMatchesNothing(t *testing.T) {
	s := &Searcher{opts: Options{Timeout: time.Second}, cache: newCache(time.Minute, time.Now, prometheus.NewRegistry())}
	for _, term := range []string{strings.Repeat("é", MaxSearch+1), strings.Repeat("a", 1<<20), "a\x00b", "\xff"} {
		res, err := s.Search(context.Background(), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC), Params{Search: term, Limit: 25})
		if err != nil || string(res.Body()) != `{"data":[],"total":0,"last_page":1}` {
			t.Errorf("Search(%d bytes) = %s, %v; want the empty result", len(term), res.Body(), err)
		}
	}
	if n := s.cache.entries.Len(); n != 0 {
		t.Errorf("cache entries after searches that match nothing = %d, want 0", n)
	}
}
