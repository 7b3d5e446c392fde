package telemetry

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/edge/jsonstr"
)

// RequestLine is what the log says about one request. Path must have been through
// LoggedPath.
type RequestLine struct {
	Method, Route, Path string
	Status              int
	Bytes               int64
	Duration            time.Duration
	ID, Addr            string
}

// attrs are the line's fields as slog attributes, in the order they are written.
func (l *RequestLine) attrs() [8]slog.Attr {
	return [8]slog.Attr{
		slog.String("method", l.Method),
		slog.String("route", l.Route),
		slog.String("path", l.Path),
		slog.Int("status", l.Status),
		slog.Int64("bytes", l.Bytes),
		slog.Float64("duration_ms", l.durationMS()),
		slog.String("request_id", l.ID),
		slog.String("remote_addr", l.Addr),
	}
}

// durationMS is the duration in milliseconds, to the microsecond.
func (l *RequestLine) durationMS() float64 { return float64(l.Duration.Microseconds()) / 1000 }

// RequestLog writes request lines: to its writer, encoded here, when it has one, and
// through its logger otherwise. The edge's command gives it a writer, because the encoding
// here pays on every request: through slog's JSON handler instead, an in-process static
// read took 68% more CPU (BenchmarkStaticRead/class-gzip, 3.15 to 5.31 µs, and 23.6% more
// for the whole HTTP exchange, BenchmarkStaticServe/edge/class-gzip, 13.4 to 16.6 µs;
// benchstat of 8 alternating runs, p < 0.01).
type RequestLog struct {
	log *slog.Logger
	w   io.Writer
}

// NewRequestLog returns a log of request lines onto w, one Write per line, in the JSON
// that log would write with slog.NewJSONHandler; with a nil w, lines go through log.
func NewRequestLog(log *slog.Logger, w io.Writer) *RequestLog {
	return &RequestLog{log: log, w: w}
}

// Write logs l, a request that ended at end; a nil RequestLog logs nothing.
func (r *RequestLog) Write(ctx context.Context, end time.Time, l *RequestLine) {
	if r == nil {
		return // log.requests is off
	}
	if r.w == nil {
		a := l.attrs()
		r.log.LogAttrs(ctx, slog.LevelInfo, "request", a[:]...)
		return
	}
	bp := lineBuffers.Get().(*[]byte)
	b := appendRequestLine((*bp)[:0], end, l)
	// A failed write has nobody to report to: the log is where it would go.
	_, _ = r.w.Write(b)
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
// at time t (requestlog_test.go holds the two to each other).
func appendRequestLine(b []byte, t time.Time, l *RequestLine) []byte {
	b = append(b, `{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":`...)
	b = jsonstr.Append(b, l.Method, jsonstr.Slog)
	b = append(b, `,"route":`...)
	b = jsonstr.Append(b, l.Route, jsonstr.Slog)
	b = append(b, `,"path":`...)
	b = jsonstr.Append(b, l.Path, jsonstr.Slog)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.Status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, l.Bytes, 10)
	b = append(b, `,"duration_ms":`...)
	// encoding/json, which slog uses for floats, writes %f's shortest form between 1e-6
	// and 1e21; whole microseconds in milliseconds are 0 or at least 0.001.
	b = strconv.AppendFloat(b, l.durationMS(), 'f', -1, 64)
	b = append(b, `,"request_id":`...)
	b = jsonstr.Append(b, l.ID, jsonstr.Slog)
	b = append(b, `,"remote_addr":`...)
	b = jsonstr.Append(b, l.Addr, jsonstr.Slog)
	return append(b, "}\n"...)
}

// JWTMark begins every JWT: its first part is base64url JSON, and JSON objects begin {".
const JWTMark = "eyJ"

// LoggedPath is the path as it is logged: from an API token's prefix or JWTMark to the end
// of its segment is replaced, so that a token or a JWT put in the path by mistake (whole,
// cut or mistyped) never reaches the log, and the result is cut by LoggedValue. A short path
// with neither is returned as it is, without allocating.
func LoggedPath(p string) string {
	var b strings.Builder
	for {
		i, mark := firstMark(p)
		if i < 0 {
			if b.Len() == 0 {
				return LoggedValue(p)
			}
			b.WriteString(p)
			return LoggedValue(b.String())
		}
		b.WriteString(p[:i])
		b.WriteString(mark + "[redacted]")
		p = p[i+len(mark):]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		} else {
			p = ""
		}
	}
}

// firstMark returns where the first API token prefix or JWTMark of p begins, and which it
// is, or -1.
func firstMark(p string) (int, string) {
	i, mark := strings.Index(p, apitoken.Prefix), apitoken.Prefix
	if j := strings.Index(p, JWTMark); j >= 0 && (i < 0 || j < i) {
		i, mark = j, JWTMark
	}
	return i, mark
}

// MaxLogged is the most bytes of a value the client chose (its path, its method) that a
// log line holds: a 900 KB path is answered 404 without a token, and must not write 900 KB
// of log.
const MaxLogged = 256

// LoggedValue is s as it is logged: cut to MaxLogged bytes, at a character boundary, and
// marked with how many bytes were left out. A short s is returned as it is.
func LoggedValue(s string) string {
	if len(s) <= MaxLogged {
		return s
	}
	cut := MaxLogged
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)-cut) + " more bytes)"
}
