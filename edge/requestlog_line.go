package edge

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// requestLine is what the log says about one request (front).
type requestLine struct {
	method, route, path string
	status              int
	bytes               int64
	duration            time.Duration
	id, addr            string
}

// attrs are the line's fields as slog attributes, in the order they are written.
func (l *requestLine) attrs() [8]slog.Attr {
	return [8]slog.Attr{
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.String("path", l.path),
		slog.Int("status", l.status),
		slog.Int64("bytes", l.bytes),
		slog.Float64("duration_ms", l.durationMS()),
		slog.String("request_id", l.id),
		slog.String("remote_addr", l.addr),
	}
}

// durationMS is the duration in milliseconds, to the microsecond.
func (l *requestLine) durationMS() float64 { return float64(l.duration.Microseconds()) / 1000 }

// logRequest writes the log line of a request that ended at end: to Options.RequestLog,
// encoded here, when it is set, and through the Logger otherwise. slog costs several times
// what the encoding here does (it formats the duration with encoding/json), and a busy
// edge writes one line per request, so the edge's command sets Options.RequestLog.
func (s *Server) logRequest(ctx context.Context, end time.Time, l *requestLine) {
	if s.opts.RequestLog == nil {
		a := l.attrs()
		s.log.LogAttrs(ctx, slog.LevelInfo, "request", a[:]...)
		return
	}
	bp := lineBuffers.Get().(*[]byte)
	b := appendRequestLine((*bp)[:0], end, l)
	// A failed write has nobody to report to: the log is where it would go.
	_, _ = s.opts.RequestLog.Write(b)
	if cap(b) <= maxPooledLine {
		*bp = b
		lineBuffers.Put(bp)
	}
}

// lineBuffers hold the bytes of request lines being written, so that a line costs no
// allocation; buffers grown past maxPooledLine by a huge path are left to the collector.
var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledLine = 16 << 10

// appendRequestLine appends l as one line of JSON, byte for byte what slog.NewJSONHandler
// with default options writes for LogAttrs(ctx, slog.LevelInfo, "request", l.attrs()...)
// at time t (requestlog_line_test.go holds the two to each other).
func appendRequestLine(b []byte, t time.Time, l *requestLine) []byte {
	b = append(b, `{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":`...)
	b = appendLogString(b, l.method)
	b = append(b, `,"route":`...)
	b = appendLogString(b, l.route)
	b = append(b, `,"path":`...)
	b = appendLogString(b, l.path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, `,"duration_ms":`...)
	// encoding/json, which slog uses for floats, writes %f's shortest form between 1e-6
	// and 1e21; whole microseconds in milliseconds are 0 or at least 0.001.
	b = strconv.AppendFloat(b, l.durationMS(), 'f', -1, 64)
	b = append(b, `,"request_id":`...)
	b = appendLogString(b, l.id)
	b = append(b, `,"remote_addr":`...)
	b = appendLogString(b, l.addr)
	return append(b, "}\n"...)
}

// appendLogString appends s quoted as slog's JSON handler quotes strings, which differs
// from encoding/json (appendJSONString, for documents): no HTML escaping, and \b and \f as
// \u0008 and \u000c; invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendLogString(b []byte, s string) []byte { return appendQuoted(b, s, false) }
