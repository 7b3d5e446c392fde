package edge

import "sync"

// feedPagesMax bounds the compressed feed pages kept for the snapshot served: at 100,000
// classes a whole mirror is about 200 pages of some 40 KB each, well within it; past it,
// pages are made for each request as before.
const feedPagesMax = 32 << 20

// feedPages keeps the gzip bodies of the feed pages served from one snapshot, by ETag, so
// that a page many partners or retries ask for is compressed once, as nginx serves a file
// compressed ahead. A page's ETag names its bytes (feedETag), so a kept body is never
// stale within its snapshot; a new snapshot empties the cache.
type feedPages struct {
	mu    sync.Mutex
	snap  string // the id of the snapshot the pages are of
	gz    map[string][]byte
	bytes int
}

// get returns the gzip body of the page etag of snapshot snap, or nil.
func (p *feedPages) get(snap, etag string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap != snap {
		return nil
	}
	return p.gz[etag]
}

// put keeps body as the gzip body of the page etag of snapshot snap, dropping the pages of
// any other snapshot, unless the cache is full.
func (p *feedPages) put(snap, etag string, body []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap != snap {
		p.snap, p.gz, p.bytes = snap, map[string][]byte{}, 0
	}
	if _, ok := p.gz[etag]; ok || p.bytes+len(body) > feedPagesMax {
		return
	}
	p.gz[etag] = body
	p.bytes += len(body)
}
