package security

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// leakSeeds name the datasets of TestNoLeak. A failure names its seed; to repeat one,
// run go test -run 'TestNoLeak/seed=SEED$' ./cmd/security/.
var leakSeeds = []uint64{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597,
	2584, 4181, 6765, 10946, 17711, 28657}

// leakTotals are the figures TestNoLeak reports.
type leakTotals struct {
	datasets, courses, secretCourses, classes, secretClasses atomic.Int64
	objects, requests, items                                 atomic.Int64
}

// TestNoLeak is the property "nothing of a non-public course or class is visible" (D28,
// spec 4.4-4.6) over generated catalogues: for each seed it builds a dataset with
// builder.Run, reads back every object of the store, then asks the edge for every static
// route, every course and class id (public ones 200, the others 404), every course's class
// search and many class searches (search terms that include fragments of the secret
// markers, date filters, every page). No body may hold the marker of a non-public row, and
// no id a client sees may be that of a non-public course or class.
func TestNoLeak(t *testing.T) {
	var tot leakTotals
	t.Run("datasets", func(t *testing.T) {
		for i, seed := range leakSeeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				o := siteOptions{}
				if i == 0 {
					o.store = testkit.NewS3Store(t) // one dataset goes through MinIO
				}
				ds := genDataset(seed)
				s := newSite(t, ds, o)
				lc := &leakCheck{t: t, s: s, ds: ds, tot: &tot}
				lc.checkStore()
				lc.checkEdge()
				tot.datasets.Add(1)
				tot.courses.Add(int64(len(ds.courses)))
				tot.secretCourses.Add(int64(len(ds.courses) - len(ds.publicCourses)))
				tot.classes.Add(int64(len(ds.classes)))
				tot.secretClasses.Add(int64(len(ds.classes) - len(ds.visibleClasses)))
			})
		}
	})
	t.Logf("%d datasets: %d courses (%d non-public), %d classes (%d not visible); %d stored objects read, "+
		"%d edge requests, %d search items and documents checked", tot.datasets.Load(), tot.courses.Load(),
		tot.secretCourses.Load(), tot.classes.Load(), tot.secretClasses.Load(), tot.objects.Load(),
		tot.requests.Load(), tot.items.Load())
}

// leakCheck checks one dataset's store and edge.
type leakCheck struct {
	t   *testing.T
	s   *site
	ds  *dataset
	tot *leakTotals
}

// fail reports a leak, naming the seed that reproduces it.
func (lc *leakCheck) fail(format string, args ...any) {
	lc.t.Helper()
	lc.t.Errorf("seed %d: %s", lc.ds.seed, fmt.Sprintf(format, args...))
}

// scan fails when body holds the marker of a non-public row, in any case.
func (lc *leakCheck) scan(where string, body []byte) {
	lc.t.Helper()
	i := bytes.Index(bytes.ToUpper(body), []byte(marker))
	if i < 0 {
		return
	}
	lc.fail("%s holds %q of a non-public row", where, excerpt(body, i))
}

// excerpt is the text around position i of b, for a failure message.
func excerpt(b []byte, i int) string {
	return string(b[max(0, i-20):min(len(b), i+30)])
}

// checkStore reads every object of the store: none holds a marker, and the current
// snapshot's documents are exactly those of public rows, each naming only public ids.
func (lc *leakCheck) checkStore() {
	ctx := context.Background()
	keys, err := lc.s.store.List(ctx, "")
	if err != nil {
		lc.t.Fatalf("List: %v", err)
	}
	for _, k := range keys {
		b, err := lc.s.store.Get(ctx, k)
		if err != nil {
			lc.t.Fatalf("Get(%s): %v", k, err)
		}
		lc.scan("stored object "+k, b)
	}
	lc.tot.objects.Add(int64(len(keys)))
	m, err := snapshot.ReadCurrent(ctx, lc.s.store)
	if err != nil {
		lc.t.Fatalf("ReadCurrent: %v", err)
	}
	courses, classes := map[int64]bool{}, map[int64]bool{}
	for route, e := range m.Documents {
		b, err := snapshot.ReadDocument(ctx, lc.s.store, e)
		if err != nil {
			lc.t.Fatalf("ReadDocument(%s): %v", route, err)
		}
		var id int64
		if _, err := fmt.Sscanf(route, "/public/course/%d", &id); err == nil {
			courses[id] = true
		} else if _, err := fmt.Sscanf(route, "/public/class/%d", &id); err == nil {
			classes[id] = true
		}
		lc.checkDocument("stored document "+route, route, b)
	}
	lc.sameIDs("stored course documents", lc.ds.publicCourses, courses)
	lc.sameIDs("stored class documents", lc.ds.visibleClasses, classes)
}

// sameIDs fails when got is not exactly want: every public row has its document (D18) and
// no other row has one.
func (lc *leakCheck) sameIDs(what string, want, got map[int64]bool) {
	lc.t.Helper()
	for id := range got {
		if !want[id] {
			lc.fail("%s include non-public id %d", what, id)
		}
	}
	for id := range want {
		if !got[id] {
			lc.fail("%s miss public id %d", what, id)
		}
	}
}

// checkEdge asks the edge for everything a client can ask for.
func (lc *leakCheck) checkEdge() {
	for _, route := range courseListRoutes() {
		lc.static(route)
	}
	lc.static(snapshot.RoutePopular)
	for _, c := range lc.ds.courses {
		route := snapshot.CourseRoute(c.id)
		if c.public {
			lc.static(route)
		} else {
			lc.notFound(route, `{"message":"Course not found."}`)
		}
		lc.searchAll(route+"/classes", url.Values{}, !c.public)
		lc.searchAll(route+"/classes", url.Values{"search": {marker}}, true)
	}
	for _, c := range lc.ds.classes {
		route := snapshot.ClassRoute(c.id)
		if lc.ds.visibleClasses[c.id] {
			lc.static(route)
		} else {
			lc.notFound(route, `{"message":"Class not found."}`)
		}
	}
	for _, term := range lc.searchTerms() {
		for _, f := range dateFilters() {
			q := url.Values{}
			for k, v := range f {
				q[k] = v
			}
			if term.text != "" {
				q.Set("search", term.text)
			}
			lc.searchAll("/public/classes", q, term.none)
		}
	}
}

// courseListRoutes are the course list and every non-empty set of types, written as
// type[] keys the way most clients send them (D13).
func courseListRoutes() []string {
	routes := []string{snapshot.RouteCourses}
	for set := 1; set < 1<<len(courseTypes); set++ {
		q := url.Values{}
		for i, typ := range courseTypes {
			if set&(1<<i) != 0 {
				q.Add("type[]", typ)
			}
		}
		routes = append(routes, snapshot.RouteCourses+"?"+q.Encode())
	}
	return routes
}

// dateFilters are the search's date filters used with every search term: none, and a few
// that cut the catalogue around today (D7, D8).
func dateFilters() []url.Values {
	return []url.Values{
		{},
		{"start": {"03-01-2027"}, "end": {"3-12-2027"}},
		{"date": {"03-05-2027"}},
		{"end": {"01-01-2027"}, "start": {"invalid date"}},
	}
}

// searchTerm is a search text and whether it must match nothing: text that only
// non-public course names hold.
type searchTerm struct {
	text string
	none bool
}

// searchTerms are the search texts: none, the marker and fragments of it, the name of
// every non-public course and the number token of each, every word names are made of
// (so that matches mix public and non-public courses), and the LIKE wildcards (D11).
func (lc *leakCheck) searchTerms() []searchTerm {
	terms := []searchTerm{{"", false}, {"%", false}, {"_", false}, {`\`, false}}
	for _, s := range []string{marker, strings.ToLower(marker), "ECRE", marker + "-C", "-C1", "%" + marker + "%", "_ECRET"} {
		terms = append(terms, searchTerm{s, true})
	}
	for _, c := range lc.ds.courses {
		if !c.public {
			token := c.name[strings.Index(c.name, marker):]
			terms = append(terms, searchTerm{c.name, true}, searchTerm{token, true})
		}
	}
	for _, w := range words {
		terms = append(terms, searchTerm{w, false})
	}
	return terms
}

// get sends GET base+route with the site's token and counts the request.
func (lc *leakCheck) get(route string) (int, []byte) {
	rec := lc.s.get(base + route)
	lc.tot.requests.Add(1)
	b := rec.Body.Bytes()
	lc.scan("GET "+route, b)
	return rec.Code, b
}

// static fetches a static document, which must exist.
func (lc *leakCheck) static(route string) {
	lc.t.Helper()
	code, b := lc.get(route)
	if code != 200 {
		lc.fail("GET %s: status %d, want 200: %s", route, code, b)
		return
	}
	lc.checkDocument("GET "+route, route, b)
}

// notFound fetches the route of a non-public row, which must be 404 with want as its body.
func (lc *leakCheck) notFound(route, want string) {
	lc.t.Helper()
	code, b := lc.get(route)
	if code != 404 || strings.TrimSpace(string(b)) != want {
		lc.fail("GET %s of a non-public row: %d %s, want 404 %s", route, code, b, want)
	}
}
