package telemetry

import (
	"strings"
	"testing"

	"github.com/trainingco/catalogue/builder/apitoken"
)

// handToken is a valid token (builder/apitoken's hand-made test token).
const handToken = "pcat_7kQ2vXr9LmP4sTn8WbYc3HdJf6GzA1eRuK5oNqVwMxE1JgdEX"

// handJWT is a JWT (HS256, any secret: only its form matters here).
const handJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsImV4cCI6MTg5MzQ1OTYwMH0.c2lnbmF0dXJlLW9mLXRoZS1wb3J0YWwtc2VjcmV0LXh4eA"

// FuzzLoggedPath holds LoggedPath to a reference: in each segment of the path, from the
// first token prefix or JWT mark on, the text is replaced by "pcat_[redacted]" or
// "eyJ[redacted]"; other segments, and a path without either, are logged as they are. So no
// token or JWT put in a path reaches the log, whole or mistyped.
func FuzzLoggedPath(f *testing.F) {
	for _, s := range []string{"", "/", "/api/v2/public/courses", "/api/v2/public/course/" + handToken,
		"/api/v2/public/course/" + handToken + "/classes", "/" + handToken + "/" + handToken, "/xpcat_abc/pcat_",
		"pcat_pcat_", "/a/pcat", "//pcat_x//", "/api/v2/public/course/" + handToken[:30],
		"/api/v2/public/class/" + handJWT, "/api/v2/public/class/1" + handJWT + "/x", "/eyJpcat_/pcat_eyJ", "/ey/J"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		segs := strings.Split(p, "/")
		for i, seg := range segs {
			j, mark := strings.Index(seg, apitoken.Prefix), apitoken.Prefix
			if k := strings.Index(seg, JWTMark); k >= 0 && (j < 0 || k < j) {
				j, mark = k, JWTMark
			}
			if j >= 0 {
				segs[i] = seg[:j] + mark + "[redacted]"
			}
		}
		want := strings.Join(segs, "/")
		got := LoggedPath(p)
		if len(want) <= 256 {
			if got != want {
				t.Fatalf("LoggedPath(%q) = %q, want %q", p, got, want)
			}
			return
		}
		// Longer: cut to at most 256 bytes, at most 3 fewer (a character boundary), and marked.
		kept, _, ok := strings.Cut(got, "…(")
		if !ok || len(kept) > 256 || len(kept) < 253 || !strings.HasPrefix(want, kept) || len(got) > 256+32 {
			t.Fatalf("LoggedPath(%d bytes) = %q, want the first 253-256 bytes of %q and a mark", len(p), got, want)
		}
	})
}

// TestLoggedValuesAreBounded: a path or method of any length takes at most 256 bytes of a
// log line, and the cut never splits a character.
func TestLoggedValuesAreBounded(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"/short", "/short"},
		{strings.Repeat("a", 256), strings.Repeat("a", 256)},
		{strings.Repeat("a", 900<<10), strings.Repeat("a", 256) + "…(921344 more bytes)"},
		// "é" is 2 bytes: the 128th would end at byte 256, the 129th would cross it.
		{"/" + strings.Repeat("é", 200), "/" + strings.Repeat("é", 127) + "…(146 more bytes)"},
	} {
		if got := LoggedPath(tt.in); got != tt.want {
			t.Errorf("LoggedPath(%d bytes) = %q, want %q", len(tt.in), got, tt.want)
		}
		if got := LoggedValue(tt.in); got != tt.want {
			t.Errorf("LoggedValue(%d bytes) = %q, want %q", len(tt.in), got, tt.want)
		}
	}
}
