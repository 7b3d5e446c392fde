package edge

import "sync"

// feedPagesMax bounds the compressed feed pages kept for the snapshot served: at 100,000
// classes a whole mirror is about 200 pages of some 40 KB each, well within it; past it,
// a page's gzip body is made for each request (at the same level, under the same strong
// ETag: feedCompressor) and only its ETags are kept.
const feedPagesMax = 32 << 20

// feedPagesCount bounds how many pages are kept: the feed's URL comes from the request's
// Host header when edge.public_url is not set, which a client may vary at will.
const feedPagesCount = 16384

// feedPageKey names one page with items of a snapshot's feed: the feed, the URL partners
// reach it at (its next links are absolute), and the position of its first item. The last
// page, empty, is not kept: it costs nothing to make.
type feedPageKey struct {
	kind  string
	url   string
	start int
}

// keptPage is what is kept of a page: its ETags, and its gzip body once one was asked for.
type keptPage struct {
	etag, etagGzip string
	gzip           []byte
}

// feedPages keeps the pages served from one snapshot, so that a page many partners or
// retries ask for is hashed and compressed once, as nginx serves a file compressed ahead:
// a repeated request costs a binary search and a map lookup. A page's items are fixed by
// its snapshot and key, so a kept page is never stale; a new snapshot empties the cache.
type feedPages struct {
	mu    sync.Mutex
	snap  string // the id of the snapshot the pages are of
	pages map[feedPageKey]keptPage
	bytes int
}

// get returns the page k of snapshot snap, and whether it is kept.
func (p *feedPages) get(snap string, k feedPageKey) (keptPage, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap != snap {
		return keptPage{}, false
	}
	pg, ok := p.pages[k]
	return pg, ok
}

// put keeps pg as the page k of snapshot snap, dropping the pages of any other snapshot;
// its gzip body is left out when the cache is full.
func (p *feedPages) put(snap string, k feedPageKey, pg keptPage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap != snap {
		p.snap, p.pages, p.bytes = snap, map[feedPageKey]keptPage{}, 0
	}
	old, ok := p.pages[k]
	if ok && old.gzip != nil || !ok && len(p.pages) >= feedPagesCount {
		return
	}
	if p.bytes+len(pg.gzip) > feedPagesMax {
		pg.gzip = nil
	}
	p.pages[k] = pg
	p.bytes += len(pg.gzip)
}
