package edge

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// BenchmarkStaticServe is BenchmarkStaticRead through net/http's server: requests are read
// from a connection and answers written to it, as make bench does over loopback, but the
// connection is in memory, so that the figures hold no kernel time and vary less on a
// busy machine. Beside the edge it measures two bare handlers that write the same bytes:
// "ceiling", as scripts/bench/ceiling answers (three headers), and "ceiling-headers", which
// also sends every header the edge sends, with the same values. The ratio ceiling/edge in
// ns/op is the share of the bare server's speed the edge reaches on one core.
func BenchmarkStaticServe(b *testing.B) {
	st := openStore(b, testkit.NewLocalStore(b))
	publish(b, st, fixtureA())
	ts := newTestServer(b, st, testConfig())
	for _, bb := range []struct{ name, target, ae string }{
		{"class-gzip", "/api/v2/public/class/7", "gzip"},
		{"class-plain", "/api/v2/public/class/7", ""},
	} {
		raw := []string{rawRequest(bb.target, ts.token, bb.ae)}
		plain, gz, hdr := ceilingDocs(b, ts, bb.target)
		benchServers(b, bb.name, raw, ts.Handler(), plain, gz, hdr)
	}
}

// benchServers runs raw requests through the edge and through the two ceilings of the
// document plain (gz gzipped): one bare, one sending the edge's headers hdr.
func benchServers(b *testing.B, name string, raw []string, edge http.Handler, plain, gz []byte, hdr http.Header) {
	for _, server := range []struct {
		name string
		h    http.Handler
	}{
		{"edge", edge},
		{"ceiling", ceilingHandler(plain, gz, nil)},
		{"ceiling-headers", ceilingHandler(plain, gz, hdr)},
	} {
		b.Run(server.name+"/"+name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			b.ResetTimer()
			serveConn(b, server.h, raw, b.N)
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			// The process's resident memory at the end of the run: what the collector let
			// the heap grow to under this load, with the catalogue loaded (Linux only).
			b.ReportMetric(float64(docstoretest.ProcStatus("VmRSS"))/(1<<20), "rss-MiB")
		})
	}
}

// BenchmarkStaticServeFull is BenchmarkStaticServe on a catalogue the size of make bench's
// (100,000 classes, 2,000 courses, course lists of about 400 KB), loaded through the real
// loader: class reads go to every class in a shuffled order, as make bench's do, so that
// the edge's indexes and documents are read from memory as cold as in the real benchmark,
// and the collector has the real snapshot to mark. The ceilings serve one document, as
// scripts/bench/ceiling does. Loading the catalogue takes half a minute or so, once per
// process: -count runs share it.
func BenchmarkStaticServeFull(b *testing.B) {
	ts, classes := fullServer(b)
	ids := rand.New(rand.NewPCG(1, 2)).Perm(classes)
	for _, bb := range []struct {
		name, ae string
		targets  []string
	}{
		{"class-gzip", "gzip", classTargets(ids)},
		{"class-plain", "", classTargets(ids)},
		{"courses-gzip", "gzip", []string{"/api/v2/public/courses"}},
	} {
		raw := make([]string, len(bb.targets))
		for i, t := range bb.targets {
			raw[i] = rawRequest(t, ts.token, bb.ae)
		}
		plain, gz, hdr := ceilingDocs(b, ts, bb.targets[0])
		benchServers(b, bb.name, raw, ts.Handler(), plain, gz, hdr)
	}
}

// full is the server of BenchmarkStaticServeFull, made by its first run.
var full struct {
	once    sync.Once
	ts      testServer
	classes int
}

// fullServer returns the server of BenchmarkStaticServeFull and its number of classes. It
// outlives the run that made it: its snapshot and tokens are in memory, and its pollers,
// which stop with that run, are not needed.
func fullServer(b *testing.B) (testServer, int) {
	full.once.Do(func() {
		dir := b.TempDir()
		gen := docstoretest.NewCatalogue(100_000, 2_000)
		gen.Publish(b, dir, "full-1")
		full.ts = newTestServer(b, store.NewLocal(dir), testConfig())
		refresh(b, full.ts.Server) // Start gives up on a first load after startTimeout; this finishes it
		full.classes = gen.Classes()
	})
	if full.ts.Server == nil {
		b.Fatal("the first run failed to make the server")
	}
	return full.ts, full.classes
}

// classTargets returns the paths of the classes ids+1, in that order.
func classTargets(ids []int) []string {
	t := make([]string, len(ids))
	for i, id := range ids {
		t[i] = "/api/v2/public/class/" + strconv.Itoa(id+1)
	}
	return t
}

// rawRequest is a GET of target as wrk sends it in make bench: with the token and, when
// ae is not empty, Accept-Encoding.
func rawRequest(target, token, ae string) string {
	raw := "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer " + token + "\r\n"
	if ae != "" {
		raw += "Accept-Encoding: " + ae + "\r\n"
	}
	return raw + "\r\n"
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

// serveConn serves n requests, taken from reqs in turn and sent one after the other on
// one connection, with an http.Server and h, and returns once the server has closed it.
func serveConn(b *testing.B, h http.Handler, reqs []string, n int) {
	c := &memConn{reqs: reqs, left: n, closed: make(chan struct{})}
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

// memConn is a client connection held in memory: reading it yields left requests, taken
// from reqs in turn, and then EOF; writes are discarded, and each write that starts with a
// status line counts one answer (net/http writes each answer's head at the start of a
// write, and flushes every answer before it reads the next request).
type memConn struct {
	reqs    []string
	next    int // the request being read
	off     int // bytes of it already read
	left    int // requests not yet read completely
	answers int
	once    sync.Once
	closed  chan struct{}
}

func (c *memConn) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	req := c.reqs[c.next]
	n := copy(p, req[c.off:])
	if c.off += n; c.off == len(req) {
		c.off, c.left = 0, c.left-1
		c.next = (c.next + 1) % len(c.reqs)
	}
	return n, nil
}

// statusLine starts every answer.
var statusLine = []byte("HTTP/1.1 ")

func (c *memConn) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, statusLine) {
		c.answers++
	}
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
