package edge

import (
	"crypto/sha256"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/builder/snapshot"
)

// The fuzz targets below run their seed corpus in every `go test`; `go test -fuzz` explores.
// They cover the two parsers of request input that had none: the course list's type list
// and the Authorization header. (Dates, limit, page and path ids: searchparams_test.go; the
// token format: builder/apitoken.)

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

// handToken is a valid token (builder/apitoken's hand-made test token).
const handToken = "pcat_7kQ2vXr9LmP4sTn8WbYc3HdJf6GzA1eRuK5oNqVwMxE1JgdEX"

// bearerRef is the reference for one Authorization value (D21): the scheme Bearer in any
// case, one or more spaces, one token with neither space nor tab.
var bearerRef = regexp.MustCompile(`(?i)^bearer +([^ \t]+)$`)

// FuzzAuthorization holds the Authorization check to its reference: bearerToken takes the
// token of exactly one well-formed value, which written back as "Bearer <token>" gives the
// same token; and a request is let in only when that token is exactly an active one.
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"Bearer " + handToken, "bearer " + handToken, "BEARER   " + handToken, "Bearer " + handToken + " ",
		"Bearer " + handToken + "\x00", "Bearer\t" + handToken, " Bearer " + handToken, "Bearer " + strings.ToUpper(handToken),
		"Bearer " + handToken[:len(handToken)-1], "Basic " + handToken, handToken, "Bearer", "Bearer ", "", "Bearer a b",
		"Bearer é", "Bearer \xff", "Bearer \t" + handToken, "\tBearer " + handToken, "Bearer\u00a0" + handToken,
		"Bearer \u00a0" + handToken, "Bearer " + handToken + "\t", "Bearer\n " + handToken, "Bearer " + handToken + "\n"} {
		f.Add(s, false)
	}
	f.Add("Bearer "+handToken, true)
	active := tokenSet{[sha256.Size]byte(apitoken.Hash(handToken)): "key"}
	f.Fuzz(func(t *testing.T, value string, twice bool) {
		h := http.Header{"Authorization": {value}}
		if twice {
			h["Authorization"] = append(h["Authorization"], value)
		}
		token, ok := bearerToken(h)
		m := bearerRef.FindStringSubmatch(value)
		wantOK := m != nil && !twice
		if ok != wantOK || (ok && token != m[1]) {
			t.Fatalf("bearerToken(%q, twice %v) = %q, %v; want ok %v", value, twice, token, ok, wantOK)
		}
		if ok {
			again, ok2 := bearerToken(http.Header{"Authorization": {"Bearer " + token}})
			if !ok2 || again != token {
				t.Fatalf("bearerToken(%q) = %q, but Bearer %q gives %q, %v", value, token, token, again, ok2)
			}
		}
		key, in := active.lookup(h)
		if wantIn := ok && token == handToken; in != wantIn || (in && key != "key") {
			t.Fatalf("lookup(%q, twice %v) = %q, %v; want let in: %v", value, twice, key, in, wantIn)
		}
	})
}
