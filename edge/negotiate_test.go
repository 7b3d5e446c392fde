package edge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAcceptsGzip(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZip", true},
		{"x-gzip", true},
		{"gzip, deflate, br", true},
		{"deflate, br", false},
		{"br;q=1.0, gzip;q=0.8, *;q=0.1", true},
		{"gzip;q=0", false},
		{"gzip;q=0.0", false},
		{"gzip;q=0.000", false},
		{"gzip; q=0", false},
		{"gzip;Q=0", false},
		{"gzip;q=0.001", true},
		{"gzip;q=0.5", true}, // identity not named: acceptable but not preferred
		{"gzip;q=1.000", true},
		{"*", true},
		{"*;q=0", false},
		{"*;q=0, gzip", true},
		{"gzip;q=0, *", false}, // named gzip wins over *
		{"identity", false},
		{"identity, gzip", true}, // tie: the smaller body
		{"identity;q=1, gzip;q=0.5", false},
		{"gzip;q=0.5, identity;q=0.4", true},
		{"identity;q=0, *;q=0.2", true},
		{"gzip;q=bogus", false},
		{"gzip;q=2", false},
		{"gzip;q=0.1234", false},
		{" , gzip ,", true},
		{"gzipx", false},
		{"deflate;q=0.5;gzip", false},
	} {
		if diff := cmp.Diff(tt.want, acceptsGzip(tt.header)); diff != "" {
			t.Errorf("acceptsGzip(%q) mismatch (-want +got):\n%s", tt.header, diff)
		}
	}
}

func TestNoneMatch(t *testing.T) {
	const tag = `"abc"`
	for _, tt := range []struct {
		lines []string
		want  bool
	}{
		{[]string{`"abc"`}, true},
		{[]string{`W/"abc"`}, true},
		{[]string{`"x", "abc"`}, true},
		{[]string{`"x",W/"abc"`}, true},
		{[]string{`"x"`, `"abc"`}, true}, // several header lines form one list
		{[]string{`"a,b", "abc"`}, true}, // a comma inside a tag does not split it
		{[]string{`*`}, true},
		{[]string{` *`}, true},
		{[]string{`"abc-gz"`}, false},
		{[]string{`"ab"`}, false},
		{[]string{`abc`}, false},
		{[]string{`"abc`}, false},
		{[]string{`w/"abc"`}, false}, // the weak prefix is case-sensitive
		{[]string{`"x" "abc"`}, true},
		{[]string{``}, false},
		{[]string{`bogus, "abc"`}, false}, // malformed: the whole document is sent
	} {
		if diff := cmp.Diff(tt.want, noneMatch(tt.lines, tag)); diff != "" {
			t.Errorf("noneMatch(%q) mismatch (-want +got):\n%s", tt.lines, diff)
		}
	}
}
