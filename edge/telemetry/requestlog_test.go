package telemetry

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
func slogLine(t testing.TB, at time.Time, l *RequestLine) string {
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
	plain := RequestLine{Method: "GET", Route: "/api/v2/public/class/:id", Path: "/api/v2/public/class/7",
		Status: 200, Bytes: 273, Duration: 62 * time.Microsecond, ID: "5f0e1d2c3b4a-17", Addr: "127.0.0.1"}
	// Written out by hand: the format of slog's JSON handler, fields in order.
	want := `{"time":"2027-03-01T12:00:05.12Z","level":"INFO","msg":"request","method":"GET",` +
		`"route":"/api/v2/public/class/:id","path":"/api/v2/public/class/7","status":200,"bytes":273,` +
		`"duration_ms":0.062,"request_id":"5f0e1d2c3b4a-17","remote_addr":"127.0.0.1"}` + "\n"
	if got := string(appendRequestLine(nil, at, &plain)); got != want {
		t.Errorf("appendRequestLine(plain) = %s, want %s", got, want)
	}

	with := func(edit func(l *RequestLine)) *RequestLine {
		l := plain
		edit(&l)
		return &l
	}
	tests := []struct {
		name string
		at   time.Time
		l    *RequestLine
	}{
		{"plain", at, &plain},
		{"whole second, other zone", time.Date(2027, 3, 1, 13, 0, 0, 0, time.FixedZone("", 3600)), &plain},
		{"zero duration", at, with(func(l *RequestLine) { l.Duration = 0 })},
		{"sub-microsecond duration", at, with(func(l *RequestLine) { l.Duration = 999 })},
		{"one microsecond", at, with(func(l *RequestLine) { l.Duration = time.Microsecond })},
		{"whole milliseconds", at, with(func(l *RequestLine) { l.Duration = 1500 * time.Millisecond })},
		{"long duration", at, with(func(l *RequestLine) { l.Duration = 36*time.Hour + 7*time.Microsecond })},
		{"escapes in the path", at, with(func(l *RequestLine) { l.Path = "/a\"b\\c\n\r\t\b\f\x00\x1f\x7f<>&/é/\u2028\u2029/\xff\xfe/😀" })},
		{"strange method", at, with(func(l *RequestLine) { l.Method = "BREW" })},
		{"empty strings", at, with(func(l *RequestLine) { l.Method, l.Route, l.Path, l.ID, l.Addr = "", "", "", "", "" })},
		{"IPv6 address", at, with(func(l *RequestLine) { l.Addr = "2001:db8::1" })},
		{"negative and huge numbers", at, with(func(l *RequestLine) { l.Status, l.Bytes = -1, 1<<62 })},
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
		l := &RequestLine{Method: method, Route: "unmatched", Path: path, Status: 404, Bytes: 25,
			Duration: time.Duration(ns), ID: id, Addr: addr}
		if got, want := string(appendRequestLine(nil, at, l)), slogLine(t, at, l); got != want {
			t.Fatalf("appendRequestLine = %s, want %s", got, want)
		}
	})
}

func TestSaneRequestID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"abc-123", true},
		{"0f8fad5b-d9cb-469f-a165-70867728950e", true},
		{"trace_1.2:3", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"has space", false},
		{"line\nbreak", false},
		{`quote"`, false},
		{"ünïcode", false},
	}
	for _, tt := range tests {
		if got := saneRequestID(tt.id); got != tt.want {
			t.Errorf("saneRequestID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}
