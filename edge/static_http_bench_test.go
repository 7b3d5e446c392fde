package edge

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/buildertest"
)

// BenchmarkStaticServe is BenchmarkStaticRead through net/http's server: requests are read
// from a connection and answers written to it, as make bench does over loopback, but the
// connection is in memory, so that the figures hold no kernel time and vary less on a
// busy machine. Beside the edge it measures two bare handlers that write the same bytes:
// "ceiling", as scripts/bench/ceiling answers (three headers), and "ceiling-headers", which
// also sends every header the edge sends, with the same values. The ratio ceiling/edge in
// ns/op is the share of the bare server's speed the edge reaches on one core.
func BenchmarkStaticServe(b *testing.B) {
	st := openStore(b, buildertest.NewLocalStore(b))
	publish(b, st, fixtureA())
	ts := newTestServer(b, st, testConfig())
	for _, bb := range []struct{ name, target, ae string }{
		{"class-gzip", "/api/v2/public/class/7", "gzip"},
		{"class-plain", "/api/v2/public/class/7", ""},
	} {
		raw := "GET " + bb.target + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer " + ts.token + "\r\n"
		if bb.ae != "" {
			raw += "Accept-Encoding: " + bb.ae + "\r\n"
		}
		raw += "\r\n"
		plain, gz, hdr := ceilingDocs(b, ts, bb.target)
		for _, server := range []struct {
			name string
			h    http.Handler
		}{
			{"edge", ts.Handler()},
			{"ceiling", ceilingHandler(plain, gz, nil)},
			{"ceiling-headers", ceilingHandler(plain, gz, hdr)},
		} {
			b.Run(server.name+"/"+bb.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := processCPU()
				b.ResetTimer()
				serveConn(b, server.h, raw, b.N)
				b.StopTimer()
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// ceilingDocs returns the identity and gzip bodies the edge serves at target, and the
// headers it sends with the gzip body that the bare ceiling does not send.
func ceilingDocs(b *testing.B, ts testServer, target string) (plain, gz []byte, extra http.Header) {
	b.Helper()
	get := func(ae string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("Authorization", "Bearer "+ts.token)
		if ae != "" {
			req.Header.Set("Accept-Encoding", ae)
		}
		rec := httptest.NewRecorder()
		ts.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: status %d", target, rec.Code)
		}
		return rec
	}
	p, g := get(""), get("gzip")
	extra = g.Result().Header.Clone()
	for _, k := range []string{"Content-Type", "Content-Length", "Content-Encoding"} {
		extra.Del(k)
	}
	return p.Body.Bytes(), g.Body.Bytes(), extra
}

// ceilingHandler is scripts/bench/ceiling's handler, with extra headers (nil: none) set as
// prepared slices.
func ceilingHandler(plain, gz []byte, extra http.Header) http.Handler {
	plainLen := []string{strconv.Itoa(len(plain))}
	gzLen := []string{strconv.Itoa(len(gz))}
	jsonType := []string{"application/json"}
	gzipEnc := []string{"gzip"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range extra {
			h[k] = v
		}
		h["Content-Type"] = jsonType
		if len(gz) > 0 && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h["Content-Encoding"] = gzipEnc
			h["Content-Length"] = gzLen
			_, _ = w.Write(gz)
			return
		}
		h["Content-Length"] = plainLen
		_, _ = w.Write(plain)
	})
}

// serveConn serves n copies of the request raw, sent one after the other on one
// connection, with an http.Server and h, and returns once the server has closed it.
func serveConn(b *testing.B, h http.Handler, raw string, n int) {
	c := &memConn{req: raw, left: n, closed: make(chan struct{})}
	ln := &oneConnListener{c: c, done: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	<-c.closed
	close(ln.done)
	if err := <-served; !errors.Is(err, net.ErrClosed) {
		b.Fatalf("serve: %v", err)
	}
	if c.answers < n {
		b.Fatalf("%d answers to %d requests", c.answers, n)
	}
}

// memConn is a client connection held in memory: reading it yields the request left times
// and then EOF, writes are discarded, and each status line written counts one answer.
type memConn struct {
	req     string
	off     int // bytes of the current copy of req already read
	left    int // copies of req not yet read completely
	answers int
	once    sync.Once
	closed  chan struct{}
}

func (c *memConn) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.req[c.off:])
	if c.off += n; c.off == len(c.req) {
		c.off, c.left = 0, c.left-1
	}
	return n, nil
}

// statusLine starts every answer.
var statusLine = []byte("HTTP/1.1 ")

func (c *memConn) Write(p []byte) (int, error) {
	c.answers += bytes.Count(p, statusLine)
	return len(p), nil
}

func (c *memConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *memConn) LocalAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }
func (c *memConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// oneConnListener accepts its connection once, then blocks until done.
type oneConnListener struct {
	c    net.Conn
	once sync.Once
	done chan struct{}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.c })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.c.LocalAddr() }
