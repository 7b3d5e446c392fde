package telemetry

import (
	"strings"
	"testing"

	"github.com/trainingco/catalogue/builder/apitoken"
)

// handToken is a valid token (builder/apitoken's hand-made test token).
const handToken = "pcat_7kQ2vXr9LmP4sTn8WbYc3HdJf6GzA1eRuK5oNqVwMxE1JgdEX"

// FuzzLoggedPath holds LoggedPath to a reference: in each segment of the path, from the
// first token prefix on, the text is replaced by "pcat_[redacted]"; other segments, and a
// path without the prefix, are logged as they are. So no token put in a path reaches the
// log, whole or mistyped.
func FuzzLoggedPath(f *testing.F) {
	for _, s := range []string{"", "/", "/api/v2/public/courses", "/api/v2/public/course/" + handToken,
		"/api/v2/public/course/" + handToken + "/classes", "/" + handToken + "/" + handToken, "/xpcat_abc/pcat_",
		"pcat_pcat_", "/a/pcat", "//pcat_x//", "/api/v2/public/course/" + handToken[:30]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		segs := strings.Split(p, "/")
		for i, seg := range segs {
			if j := strings.Index(seg, apitoken.Prefix); j >= 0 {
				segs[i] = seg[:j] + apitoken.Prefix + "[redacted]"
			}
		}
		if got, want := LoggedPath(p), strings.Join(segs, "/"); got != want {
			t.Fatalf("LoggedPath(%q) = %q, want %q", p, got, want)
		}
	})
}
