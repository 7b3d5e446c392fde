package cork

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sent is what the server saw of one response: the data segments it took and whether the
// socket was left corked.
type sent struct {
	segments uint32
	corked   int
	err      error
}

// serveOnce starts a server whose handler writes body with Write and reports what it sent.
func serveOnce(t *testing.T, body []byte, wrap func(http.ResponseWriter) http.ResponseWriter) (string, <-chan sent) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	report := make(chan sent, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := r.Context().Value(connKey{}).(syscall.RawConn)
		before, err := dataSegments(rc)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		Write(wrap(w), r, body)
		after, err2 := dataSegments(rc)
		var corked int
		err3 := rc.Control(func(fd uintptr) {
			corked, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK)
		})
		report <- sent{segments: after - before, corked: corked, err: errors.Join(err, err2, err3)}
	})
	srv := &http.Server{Handler: h, ConnContext: ConnContext, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String() + "/", report
}

func dataSegments(rc syscall.RawConn) (uint32, error) {
	var info *unix.TCPInfo
	var err error
	if cerr := rc.Control(func(fd uintptr) { info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); cerr != nil {
		return 0, cerr
	}
	if err != nil {
		return 0, err
	}
	return info.Data_segs_out, nil
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLargeBodyLeavesInOneSegment: a 20 KB body (a feed page's gzip body), which net/http
// writes in two writes (its 4 KB buffer, then the rest), leaves with its headers in one data
// segment, and the socket is uncorked afterwards. 20 KB, because a new connection's
// segments are bounded by half the peer's first window (32 KB), whatever the loopback's MSS.
func TestLargeBodyLeavesInOneSegment(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 20<<10/16)
	for name, wrap := range map[string]func(http.ResponseWriter) http.ResponseWriter{
		"net/http's writer":                           func(w http.ResponseWriter) http.ResponseWriter { return w },
		"a wrapper whose Flush panics, as Echo's may": func(w http.ResponseWriter) http.ResponseWriter { return panickyWrapper{w} },
	} {
		t.Run(name, func(t *testing.T) { oneSegment(t, body, wrap) })
	}
}

func oneSegment(t *testing.T, body []byte, wrap func(http.ResponseWriter) http.ResponseWriter) {
	url, report := serveOnce(t, body, wrap)
	if got := get(t, url); !bytes.Equal(got, body) {
		t.Fatalf("the client read %d bytes, not the %d written", len(got), len(body))
	}
	s := <-report
	if s.err != nil {
		t.Fatal(s.err)
	}
	if s.segments != 1 {
		t.Errorf("the response took %d data segments, want 1", s.segments)
	}
	if s.corked != 0 {
		t.Errorf("TCP_CORK is %d after the response, want 0", s.corked)
	}
}

// TestSmallBodyIsWrittenAsItIs: a body that fits net/http's buffer arrives whole and
// leaves the socket uncorked.
func TestSmallBodyIsWrittenAsItIs(t *testing.T) {
	body := []byte(`{"id":1}`)
	url, report := serveOnce(t, body, func(w http.ResponseWriter) http.ResponseWriter { return w })
	if got := get(t, url); !bytes.Equal(got, body) {
		t.Fatalf("the client read %q, want %q", got, body)
	}
	if s := <-report; s.err != nil || s.corked != 0 {
		t.Fatalf("corked %d, err %v; want 0, nil", s.corked, s.err)
	}
}

// panickyWrapper wraps a writer as echo.Response does: its Flush panics where the writer it
// wraps cannot flush, and it can be unwrapped.
type panickyWrapper struct{ http.ResponseWriter }

func (p panickyWrapper) Flush()                      { panic("Flush called on the wrapper") }
func (p panickyWrapper) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// TestHugeBodyIsNotCorked: a body over maxBody is written with the socket uncorked. Corked,
// a 330 KB course list went out at 2.5 times the CPU on this project's bench machine (7,850
// against 19,517 req/s for a bare net/http handler, 2026-11-27), past a cliff between 120
// and 131 KB; at 21-100 KB the cork costs nothing or helps.
func TestHugeBodyIsNotCorked(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	corked := make(chan int, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := r.Context().Value(connKey{}).(syscall.RawConn)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		Write(corkWatcher{ResponseWriter: w, rc: rc, corked: corked}, r, body)
	})
	srv := &http.Server{Handler: h, ConnContext: ConnContext, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	if got := get(t, "http://"+ln.Addr().String()+"/"); !bytes.Equal(got, body) {
		t.Fatalf("the client read %d bytes, not the %d written", len(got), len(body))
	}
	if c := <-corked; c != 0 {
		t.Errorf("TCP_CORK was %d while a %d-byte body was written, want 0", c, len(body))
	}
}

// corkWatcher records TCP_CORK as it is when the body is written.
type corkWatcher struct {
	http.ResponseWriter
	rc     syscall.RawConn
	corked chan int
}

func (c corkWatcher) Write(b []byte) (int, error) {
	v := -1
	_ = c.rc.Control(func(fd uintptr) { v, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK) })
	select {
	case c.corked <- v:
	default:
	}
	return c.ResponseWriter.Write(b)
}

func (c corkWatcher) Unwrap() http.ResponseWriter { return c.ResponseWriter }
