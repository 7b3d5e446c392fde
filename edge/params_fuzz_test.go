package edge

import (
	"math/big"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// The fuzz targets below run their seed corpus in every `go test`; `go test -fuzz` explores.
// They cover the parsers of the server's own request input: the course list's type list
// and path ids. (Dates, limit and page: edge/search; the Authorization header: edge/auth;
// the token format: builder/apitoken.)

// typeKeyRef is the reference for the keys that carry a course type (D13): type, type[]
// and the qs library's type[N].
var typeKeyRef = regexp.MustCompile(`^type(\[[0-9]*\])?$`)

// FuzzParseTypes holds parseTypes to a reference written from D13: the types are exactly
// the non-empty values of the type keys when every one of them is a course type, written
// exactly, and nothing otherwise; the route they name round-trips to the same set.
func FuzzParseTypes(f *testing.F) {
	for _, s := range []string{"", "type=Online", "type[]=Online&type[]=Blended", "type[0]=Brick+and+Mortar&type[1]=Online",
		"type=Online&type=Online", "type=online", "type[x]=Online", "type[=Online", "type=%00", "type=Online&type=",
		"type[]=Webinar&type=Online", "type=Brick%20and%20Mortar&limit=5", "%zz&type=Blended", "type[99999999999999999999]=Online",
		"type=Online;type=Blended", "TYPE=Online"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		q, _ := url.ParseQuery(query) // Echo keeps the pairs that parse, as here
		got, ok := parseTypes(q)
		var want []string
		wantOK := true
		for k, vs := range q {
			if !typeKeyRef.MatchString(k) {
				continue
			}
			for _, v := range vs {
				switch {
				case v == "":
				case v == "Online" || v == "Brick and Mortar" || v == "Blended":
					want = append(want, v)
				default:
					wantOK = false
				}
			}
		}
		slices.Sort(want)
		sorted := slices.Sorted(slices.Values(got))
		if ok != wantOK || (ok && !slices.Equal(sorted, want)) || (!ok && got != nil) {
			t.Fatalf("parseTypes(%q) = %q, %v; want %q, %v", query, got, ok, want, wantOK)
		}
		if !ok {
			return
		}
		// The route names the distinct types, or the whole list for none or all three.
		route := snapshot.CoursesRoute(got)
		set := slices.Compact(sorted)
		named := []string{}
		if _, rest, found := strings.Cut(route, "?type="); found {
			named = strings.Split(rest, "&type=")
		}
		if len(set) == 0 || len(set) == len(snapshot.CourseTypes) {
			set = []string{}
		}
		if !slices.Equal(named, set) {
			t.Fatalf("parseTypes(%q) = %q names route %q, want the types %q", query, got, route, set)
		}
	})
}

// FuzzSearchPathID holds parseID (params.go), which the per-course search shares with the
// static routes, to strconv: a positive int64 written without sign or leading zero.
func FuzzSearchPathID(f *testing.F) {
	for _, s := range []string{"1", "0", "01", "-1", "+1", "abc", "9223372036854775807", "9223372036854775808", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseID(s)
		n, err := strconv.ParseInt(s, 10, 64)
		want := err == nil && n > 0 && s[0] >= '1' && s[0] <= '9'
		if ok != want || (ok && got != n) {
			t.Fatalf("parseID(%q) = %d, %v; want ok=%v (%d)", s, got, ok, want, n)
		}
	})
}

// FuzzSearchCourseID holds parseSearchCourseID to math/big: a positive integer written
// without sign or leading zero is well formed at any length, and names no course past int64.
func FuzzSearchCourseID(f *testing.F) {
	for _, s := range []string{"1", "0", "01", "-1", "abc", "9223372036854775807", "9223372036854775808",
		"99999999999999999999999", "099999999999999999999999", "9999999999999999999x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, none, ok := parseSearchCourseID(s)
		n, isInt := new(big.Int).SetString(s, 10)
		want := isInt && s[0] >= '1' && s[0] <= '9'
		wantNone := want && !n.IsInt64()
		if ok != want || none != wantNone || (ok && !none && id != n.Int64()) || (none && id != 0) {
			t.Fatalf("parseSearchCourseID(%q) = %d, %v, %v; want ok=%v none=%v (%s)", s, id, none, ok, want, wantNone, n)
		}
	})
}
