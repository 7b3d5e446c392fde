package edge

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// slogLine is the line slog.NewJSONHandler with default options writes for l at time t:
// the reference appendRequestLine must match byte for byte.
func slogLine(t testing.TB, at time.Time, l *requestLine) string {
	t.Helper()
	var buf bytes.Buffer
	r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	a := l.attrs()
	r.AddAttrs(a[:]...)
	if err := slog.NewJSONHandler(&buf, nil).Handle(context.Background(), r); err != nil {
		t.Fatalf("slog: %v", err)
	}
	return buf.String()
}

// TestAppendRequestLine: the edge's own encoding of a request line is the one slog writes.
func TestAppendRequestLine(t *testing.T) {
	at := time.Date(2027, 3, 1, 12, 0, 5, 120000000, time.UTC)
	plain := requestLine{method: "GET", route: "/api/v2/public/class/:id", path: "/api/v2/public/class/7",
		status: 200, bytes: 273, duration: 62 * time.Microsecond, id: "5f0e1d2c3b4a-17", addr: "127.0.0.1"}
	// Written out by hand: the format of slog's JSON handler, fields in order.
	want := `{"time":"2027-03-01T12:00:05.12Z","level":"INFO","msg":"request","method":"GET",` +
		`"route":"/api/v2/public/class/:id","path":"/api/v2/public/class/7","status":200,"bytes":273,` +
		`"duration_ms":0.062,"request_id":"5f0e1d2c3b4a-17","remote_addr":"127.0.0.1"}` + "\n"
	if got := string(appendRequestLine(nil, at, &plain)); got != want {
		t.Errorf("appendRequestLine(plain) = %s, want %s", got, want)
	}

	with := func(edit func(l *requestLine)) *requestLine {
		l := plain
		edit(&l)
		return &l
	}
	tests := []struct {
		name string
		at   time.Time
		l    *requestLine
	}{
		{"plain", at, &plain},
		{"whole second, other zone", time.Date(2027, 3, 1, 13, 0, 0, 0, time.FixedZone("", 3600)), &plain},
		{"zero duration", at, with(func(l *requestLine) { l.duration = 0 })},
		{"sub-microsecond duration", at, with(func(l *requestLine) { l.duration = 999 })},
		{"one microsecond", at, with(func(l *requestLine) { l.duration = time.Microsecond })},
		{"whole milliseconds", at, with(func(l *requestLine) { l.duration = 1500 * time.Millisecond })},
		{"long duration", at, with(func(l *requestLine) { l.duration = 36*time.Hour + 7*time.Microsecond })},
		{"escapes in the path", at, with(func(l *requestLine) { l.path = "/a\"b\\c\n\r\t\b\f\x00\x1f\x7f<>&/é/\u2028\u2029/\xff\xfe/😀" })},
		{"strange method", at, with(func(l *requestLine) { l.method = "BREW" })},
		{"empty strings", at, with(func(l *requestLine) { l.method, l.route, l.path, l.id, l.addr = "", "", "", "", "" })},
		{"IPv6 address", at, with(func(l *requestLine) { l.addr = "2001:db8::1" })},
		{"negative and huge numbers", at, with(func(l *requestLine) { l.status, l.bytes = -1, 1<<62 })},
	}
	for _, tt := range tests {
		want := slogLine(t, tt.at, tt.l)
		if diff := cmp.Diff(want, string(appendRequestLine(nil, tt.at, tt.l))); diff != "" {
			t.Errorf("appendRequestLine(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// FuzzAppendRequestLine holds appendRequestLine to slog's JSON handler for any text in the
// fields a client can choose (the method, path, request id and, behind a trusted proxy,
// address) and any duration.
func FuzzAppendRequestLine(f *testing.F) {
	f.Add("GET", "/api/v2/public/class/7", "abc-1", "127.0.0.1", int64(62000))
	f.Add("\x00", "/\xff\u2028\"\\", "\t", "<&>", int64(-5))
	f.Fuzz(func(t *testing.T, method, path, id, addr string, ns int64) {
		at := time.Date(2027, 3, 1, 12, 0, 5, 120000000, time.UTC)
		l := &requestLine{method: method, route: "unmatched", path: path, status: 404, bytes: 25,
			duration: time.Duration(ns), id: id, addr: addr}
		if got, want := string(appendRequestLine(nil, at, l)), slogLine(t, at, l); got != want {
			t.Fatalf("appendRequestLine = %s, want %s", got, want)
		}
	})
}

// TestRequestLogThroughLogger: without Options.RequestLog, request lines go through the
// Logger, with the same fields.
func TestRequestLogThroughLogger(t *testing.T) {
	env := newAuthEnvWith(t, nil, func(o *Options) { o.RequestLog = nil })
	env.send(req{target: "/no/such/path", header: map[string]string{"X-Request-ID": "via-slog"}})
	logs := env.logs.String()
	for _, want := range []string{`"msg":"request","method":"GET","route":"unmatched","path":"/no/such/path","status":404,"bytes":25,"duration_ms":`,
		`,"request_id":"via-slog","remote_addr":"192.0.2.1"}`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}
