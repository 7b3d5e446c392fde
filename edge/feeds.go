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
		after, present, ok := search.ParseQueryInt(c.QueryParam("afterChangeNumber"))
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
		items := f.feed(snap).Page(make([]docstore.Item, 0, FeedPageSize), after, FeedPageSize)
		feedURL := s.publicURL(c.Request()) + s.cfg.BasePath + "/public" + f.path
		next := feedURL
		switch {
		case len(items) > 0:
			next += "?afterChangeNumber=" + strconv.FormatInt(items[len(items)-1].Modified, 10)
		case present:
			next += "?afterChangeNumber=" + strconv.FormatInt(after, 10)
		}
		err = s.serveFeedPage(c, snap, f.kind, next, items)
		runtime.KeepAlive(snap) // the items' bodies are in the snapshot's chunks
		return err
	}
}

// serveFeedPage writes the page of items whose next URL is next, with D25's ETag, 304 and
// gzip, and D38's Cache-Control. The ETag is made from what decides the body (next, the
// license, each item's state, id, change number and document hash) rather than from the
// body, a few hundred kilobytes: it is known before the body is made, so a 304 makes none.
func (s *Server) serveFeedPage(c echo.Context, snap *docstore.Snapshot, kind, next string, items []docstore.Item) error {
	req, res := c.Request(), c.Response()
	h := res.Header()
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	etag := feedETag(kind, next, s.license, items, gz)
	if v := h["Vary"]; len(v) == 0 {
		h["Vary"] = hdrVaryEncoding
	} else {
		h["Vary"] = append(v, hdrVaryEncoding[0])
	}
	h["Etag"] = []string{etag}
	h["Cache-Control"] = hdrFeedPage
	if len(items) == 0 {
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
		if body = s.feedPages.get(snap.ID(), etag); body == nil {
			page := appendFeedPage(make([]byte, 0, feedPageCap(items)), kind, next, s.license, items)
			body = gzipbody.Append(make([]byte, 0, len(page)/4+64), page)
			s.feedPages.put(snap.ID(), etag, body)
		}
	} else {
		body = appendFeedPage(make([]byte, 0, feedPageCap(items)), kind, next, s.license, items)
	}
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	res.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	_, _ = res.Write(body) // a failed write means the client has gone
	return nil
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

// feedETag is the strong ETag of a page: a hash of everything its body is made of, "-gz"
// for its gzip body (D25). A change number is given to one state of one document only, so
// the items' numbers and hashes decide their bytes.
func feedETag(kind, next, license string, items []docstore.Item, gz bool) string {
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
	tag := `"f` + hex.EncodeToString(hash.Sum(nil))
	if gz {
		tag += "-gz"
	}
	return tag + `"`
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
		if p := firstForwarded(req.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstForwarded(req.Header.Get("X-Forwarded-Host")); validHost(h) {
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

// firstForwarded is the first of a forwarded header's comma-separated values: the one the
// proxy nearest the client set.
func firstForwarded(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.ToLower(strings.TrimSpace(first))
}

// validHost reports whether h is a host[:port] fit to put in a URL: letters, digits, '.',
// '-', ':' and an IPv6 literal's brackets, nothing that could change what the URL names.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-:[]", c) >= 0) {
			return false
		}
	}
	return true
}
