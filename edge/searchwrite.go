package edge

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"
)

// searchGzipWriters are reused gzip writers at BestSpeed: a search page is small and answered
// once, so fast compression beats a few bytes saved.
var searchGzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level never fails
	return w
}}

// searchGzipBufs are reused buffers for compressed bodies.
var searchGzipBufs = sync.Pool{New: func() any { return new(byteSink) }}

// byteSink is an io.Writer that appends to a reusable slice.
type byteSink struct{ b []byte }

func (s *byteSink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

// write sends a 200 JSON body computed live: gzip-compressed when the client accepts it,
// with Vary: Accept-Encoding and the Content-Length of what is sent (D25), and headers only
// for HEAD. gzipped, when not nil, returns the body's gzip encoding (a cached response
// keeps it); nil compresses here. Nothing is cached downstream by accident: the body
// depends on "today" and on the database, so it carries no validator.
func (h *searcher) write(c echo.Context, body []byte, gzipped func() []byte) error {
	req, res := c.Request(), c.Response()
	hdr := res.Header()
	hdr.Add("Vary", echo.HeaderAcceptEncoding)
	hdr.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	hdr.Set("Cache-Control", "no-store")
	switch {
	case !acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding)):
	case gzipped != nil:
		body = gzipped()
		hdr.Set(echo.HeaderContentEncoding, "gzip")
	default:
		sink := searchGzipBufs.Get().(*byteSink)
		defer searchGzipBufs.Put(sink)
		sink.b = gzipAppend(sink.b[:0], body)
		body = sink.b
		hdr.Set(echo.HeaderContentEncoding, "gzip")
	}
	hdr.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	res.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	// A failed write means the client has gone; there is nobody left to tell.
	_, _ = res.Write(body)
	return nil
}

// gzipAppend appends the gzip compression of body to dst.
func gzipAppend(dst, body []byte) []byte {
	sink := &byteSink{b: dst}
	zw := searchGzipWriters.Get().(*gzip.Writer)
	defer searchGzipWriters.Put(zw)
	zw.Reset(sink)
	_, _ = zw.Write(body) // writes to a byteSink never fail
	_ = zw.Close()
	return sink.b
}
