// Package cork sends a response body larger than net/http's write buffer, up to 64 KB, in
// one TCP transmission, as nginx's tcp_nopush does for the files it serves.
//
// net/http buffers 4 KB of a connection's output: a larger response leaves in two writes,
// the buffer holding the headers and the body's first bytes, then the rest. Go sets
// TCP_NODELAY, so each write is a transmission of its own, and on the loopback or a LAN a
// transmission costs more CPU than the bytes in it: perf of a bare net/http handler sending
// a 21 KB feed page put a quarter of its CPU in the second one. Write corks the socket around
// the body (TCP_CORK) and flushes before uncorking, so the kernel sends headers and body
// together, once; a body that fits the buffer already leaves in one write and is written
// as it is.
package cork

import (
	"context"
	"net"
	"net/http"
	"syscall"
)

// minBody is the smallest body worth two setsockopt calls: the headers and a body up to
// about this size fit net/http's 4 KB buffer, sent in one write when the handler returns.
const minBody = 3 << 10

// maxBody is the largest body corked. A larger one leaves in many segments anyway, and
// corked it costs far more: a bare net/http handler sending 330 KB (the course list) made
// 7,850 req/s corked against 19,517 not (2026-11-27, the bench machine's kernel), a cliff
// between 120 and 131 KB; from 21 to 100 KB the cork cost nothing or saved up to 10%.
const maxBody = 64 << 10

type connKey struct{}

// ConnContext is for http.Server.ConnContext: it keeps a TCP connection's descriptor in
// the context of its requests, for Write. Other connections are left as they are.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return ctx
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return ctx
	}
	return context.WithValue(ctx, connKey{}, rc)
}

// Write writes body, the whole response body of r, to w, whose headers are set (with
// Content-Length, so that the flush does not switch to chunked encoding). A failed write
// means the client has gone; there is nobody left to tell, so nothing is returned.
func Write(w http.ResponseWriter, r *http.Request, body []byte) {
	rc, _ := r.Context().Value(connKey{}).(syscall.RawConn)
	if rc == nil || len(body) < minBody || len(body) > maxBody {
		_, _ = w.Write(body)
		return
	}
	setCork(rc, true)
	_, _ = w.Write(body)
	flush(w)
	setCork(rc, false) // sends what the cork held
}

// flush flushes net/http's buffers under w's wrappers. It unwraps rather than calling a
// wrapper's Flush, which may panic where flushing is not supported (Echo's does); a writer
// that cannot flush has its last bytes sent when the handler returns, uncorked, as if
// nothing had been corked.
func flush(w http.ResponseWriter) {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }:
			_ = t.FlushError()
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return
		}
	}
}
