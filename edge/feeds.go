package edge

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/edge/cork"
	"github.com/trainingco/catalogue/edge/docstore"
	"github.com/trainingco/catalogue/edge/gzipbody"
	"github.com/trainingco/catalogue/edge/jsonstr"
	"github.com/trainingco/catalogue/edge/search"
)

// FeedPageSize is the most items a feed page holds: RPDE's recommendation (D37).
const FeedPageSize = 500

// Cache-Control of the feeds' pages (D38): a page with items never changes while its
// items do not, the last one (empty) is where a partner polls for what comes next.
var (
	hdrFeedPage = header("private, max-age=3600")
	hdrFeedLast = header("private, max-age=8")
)

// feedKind is one of the two feeds.
type feedKind struct {
	path string // under {base}/public
	kind string // the items' kind
	feed func(*docstore.Snapshot) *docstore.Feed
}

var (
	courseFeed = feedKind{"/feeds/courses", snapshot.KindCourse, (*docstore.Snapshot).Courses}
	classFeed  = feedKind{"/feeds/classes", snapshot.KindClass, (*docstore.Snapshot).Classes}
)

// handleFeed serves a page of feed f (D35-D38): the items after afterChangeNumber, at most
// FeedPageSize, from the snapshot in memory, whose index gives each item's document.
func (s *Server) handleFeed(f feedKind) echo.HandlerFunc {
	return func(c echo.Context) error {
		q := queryParams(c)
		after, present, ok := search.ParseQueryInt(search.Last(q, "afterChangeNumber"))
		if !ok {
			return fail(ErrBadRequest, "The afterChangeNumber parameter must be an integer.")
		}
		if !present {
			after = math.MinInt64
		}
		snap, err := s.serving(c)
		if err != nil {
			return err
		}
		feed := f.feed(snap)
		r := &feedRequest{kind: f.kind, feed: feed, start: feed.Start(after), after: after, present: present,
			url: s.publicURL(c.Request()) + s.cfg.BasePath + "/public" + f.path}
		err = s.serveFeedPage(c, snap, r)
		runtime.KeepAlive(snap) // the items' bodies are in the snapshot's chunks
		return err
	}
}

// feedRequest is the page a request asks for: where it starts in its feed, and what its
// next link is made of. Its items are read only when its ETag or body has to be made.
type feedRequest struct {
	kind    string
	feed    *docstore.Feed
	url     string // the feed's absolute URL
	start   int    // the position of the page's first item in the feed
	after   int64
	present bool // afterChangeNumber was given
	items   []docstore.Item
}

// last reports whether the page is the last, empty one.
func (r *feedRequest) last() bool { return r.start == r.feed.Len() }

// page is the page's items, read once.
func (r *feedRequest) page() []docstore.Item {
	if r.items == nil {
		r.items = r.feed.PageAt(make([]docstore.Item, 0, FeedPageSize), r.start, FeedPageSize)
	}
	return r.items
}

// next is the page's next link (D37): after its last item, or where it was asked from.
func (r *feedRequest) next() string {
	items := r.page()
	switch {
	case len(items) > 0:
		return r.url + "?afterChangeNumber=" + strconv.FormatInt(items[len(items)-1].Modified, 10)
	case r.present:
		return r.url + "?afterChangeNumber=" + strconv.FormatInt(r.after, 10)
	}
	return r.url
}

// body is the page's JSON.
func (r *feedRequest) body(license string) []byte {
	items := r.page()
	return appendFeedPage(make([]byte, 0, feedPageCap(items)), r.kind, r.next(), license, items)
}

// serveFeedPage writes the page r with D25's ETag, 304 and gzip, and D38's Cache-Control.
// The ETag is made from what decides the body rather than from the body, a few hundred
// kilobytes: it is known before the body is made, so a 304 makes none. A page with items
// is kept (feedPages) with its ETags and gzip body, so that asking for it again costs what
// a static document costs.
func (s *Server) serveFeedPage(c echo.Context, snap *docstore.Snapshot, r *feedRequest) error {
	req, res := c.Request(), c.Response()
	h := res.Header()
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	key := feedPageKey{kind: r.kind, url: r.url, start: r.start}
	pg, kept := keptPage{}, false
	if !r.last() {
		pg, kept = s.feedPages.get(snap.ID(), key)
	}
	if !kept {
		pg.etag = hashFeedPage(r.kind, r.next(), s.license, r.page())
		pg.etagGzip = strings.TrimSuffix(pg.etag, `"`) + `-gz"`
	}
	etag := pg.etag
	if gz {
		etag = pg.etagGzip
	}
	if v := h["Vary"]; len(v) == 0 {
		h["Vary"] = hdrVaryEncoding
	} else {
		h["Vary"] = append(v, hdrVaryEncoding[0])
	}
	h["Etag"] = []string{etag}
	h["Cache-Control"] = hdrFeedPage
	if r.last() {
		h["Cache-Control"] = hdrFeedLast
	}
	h["X-Catalogue-Snapshot"] = snap.IDHeader()
	if inm := req.Header["If-None-Match"]; len(inm) > 0 && noneMatch(inm, etag) {
		res.WriteHeader(http.StatusNotModified)
		return nil
	}
	var body []byte
	if gz {
		h["Content-Encoding"] = hdrGzip
		if pg.gzip == nil {
			page := r.body(s.license)
			pg.gzip, kept = feedCompressor(r)(make([]byte, 0, len(page)/4+64), page), false
		}
		body = pg.gzip
	} else {
		body = r.body(s.license)
	}
	if !kept && !r.last() {
		s.feedPages.put(snap.ID(), key, pg)
	}
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	res.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	cork.Write(res, req, body)
	return nil
}

// feedCompressor is how the gzip body of the page r is compressed: a page before the last
// at the best level, whether the cache keeps it or (full) not, so that its strong ETag
// names one byte sequence on every edge (D25; RFC 9110 8.8.1). Compressing at the best level
// for one request costs 8 ms for 500 classes, which the rate limit bounds. The last page is
// never kept, so it is made at the fast level, always.
func feedCompressor(r *feedRequest) func(dst, body []byte) []byte {
	if r.last() {
		return gzipbody.Append
	}
	return gzipbody.AppendSmallest
}

// appendFeedPage appends the page {"next", "items", "license"} (D35) to b. Each item's
// data is its document's bytes as the single read serves them.
func appendFeedPage(b []byte, kind, next, license string, items []docstore.Item) []byte {
	b = append(b, `{"next":`...)
	b = jsonstr.Append(b, next, jsonstr.Slog)
	b = append(b, `,"items":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"state":`...)
		if it.Doc == nil {
			b = append(b, `"deleted"`...)
		} else {
			b = append(b, `"updated"`...)
		}
		b = append(b, `,"kind":"`...)
		b = append(b, kind...)
		b = append(b, `","id":`...)
		b = strconv.AppendInt(b, it.ID, 10)
		b = append(b, `,"modified":`...)
		b = strconv.AppendInt(b, it.Modified, 10)
		if it.Doc != nil {
			b = append(b, `,"data":`...)
			b = append(b, it.Doc.Body()...)
		}
		b = append(b, '}')
	}
	b = append(b, `],"license":`...)
	b = jsonstr.Append(b, license, jsonstr.Slog)
	return append(b, '}')
}

// feedPageCap is the size of the page of items, near enough that its body is made in one
// allocation.
func feedPageCap(items []docstore.Item) int {
	n := 256
	for _, it := range items {
		n += 96
		if it.Doc != nil {
			n += len(it.Doc.Body())
		}
	}
	return n
}

// hashFeedPage is feedETag, in a variable so that a test can count the pages hashed.
var hashFeedPage = feedETag

// feedETag is the strong ETag of a page: a hash of everything its body is made of (its
// gzip body's adds "-gz", D25). A change number is given to one state of one document
// only, so the items' numbers and hashes decide their bytes.
func feedETag(kind, next, license string, items []docstore.Item) string {
	hash := sha256.New()
	var buf [8]byte
	for _, s := range []string{kind, next, license} {
		_, _ = hash.Write(binary.BigEndian.AppendUint64(buf[:0], uint64(len(s))))
		_, _ = hash.Write([]byte(s))
	}
	for _, it := range items {
		_, _ = hash.Write(binary.BigEndian.AppendUint64(buf[:0], uint64(it.ID)))
		_, _ = hash.Write(binary.BigEndian.AppendUint64(buf[:0], uint64(it.Modified)))
		if it.Doc != nil {
			h := it.Doc.Hash()
			_, _ = hash.Write(h[:])
		} else {
			_, _ = hash.Write(make([]byte, sha256.Size))
		}
	}
	return `"f` + hex.EncodeToString(hash.Sum(nil)) + `"`
}

// publicURL is the scheme and host partners reach the edge at, for the feeds' absolute
// URLs (D37): edge.public_url when set, else the request's, with X-Forwarded-Proto and
// X-Forwarded-Host believed only from a peer in edge.trusted_proxies, as X-Forwarded-For.
func (s *Server) publicURL(req *http.Request) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme, host := "http", req.Host
	if req.TLS != nil {
		scheme = "https"
	}
	if s.fromTrustedProxy(req) {
		if p := lastForwarded(req.Header.Values("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := lastForwarded(req.Header.Values("X-Forwarded-Host")); validHost(h) {
			host = h
		}
	}
	if !validHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host
}

// fromTrustedProxy reports whether the request's direct peer is in edge.trusted_proxies.
func (s *Server) fromTrustedProxy(req *http.Request) bool {
	if len(s.proxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(req.RemoteAddr)
	if err != nil {
		return false
	}
	addr := ap.Addr().Unmap()
	for _, p := range s.proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// lastForwarded is the last of a forwarded header's values, over all its lines: the one the
// trusted proxy itself set or appended. Those before it are whatever the client sent (a
// proxy such as Apache's mod_proxy appends to X-Forwarded-Host, HAProxy's add-header adds a
// line), as with X-Forwarded-For.
func lastForwarded(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	v := lines[len(lines)-1]
	return strings.ToLower(strings.TrimSpace(v[strings.LastIndexByte(v, ',')+1:]))
}

// validHost reports whether h is a host[:port] fit to put in a URL: letters, digits, '.',
// '-', '_' (RFC 3986 allows it, and Docker names services with it), ':' and an IPv6
// literal's brackets, nothing that could change what the URL names.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-_:[]", c) >= 0) {
			return false
		}
	}
	return true
}
