package main

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"
)

// Kinds of request, as the report counts them.
const (
	kindStatic      = "static"      // GET of a document
	kindHead        = "head"        // HEAD of a document
	kindConditional = "conditional" // GET with If-None-Match: the tag of an earlier answer
	kindSearch      = "search"      // the live class search
	kindNotFound    = "notfound"    // an id no snapshot holds
	kindBadToken    = "badtoken"    // no token, or one the edge must refuse
)

var kinds = []string{kindStatic, kindHead, kindConditional, kindSearch, kindNotFound, kindBadToken}

// target is one request to send and what its answer is checked against.
type target struct {
	kind   string
	method string
	path   string  // below the base path, query included
	route  string  // the manifest route of a document; "" for the others
	gzip   bool    // Accept-Encoding: gzip
	inm    etag    // If-None-Match, when tag is not ""
	course string  // the course of a per-course search
	limit  int     // the page size of a search
	auth   badAuth // the credentials of a bad-token request
}

// badAuth is one way of failing authentication.
type badAuth struct {
	name   string // for the report, which never shows a token
	header string // the Authorization header; "" sends none
}

// etag is the tag of an answer and the hash of the document it carried.
type etag struct{ tag, hash string }

// etagKey names the remembered tag of route in one encoding.
func etagKey(route string, gzip bool) string {
	if gzip {
		return route + "\x00gz"
	}
	return route
}

// pick draws the next request of a good token: mostly documents, a fifth of them
// conditional, a third searches, a few ids that do not exist.
func (w *worker) pick() target {
	switch r := w.rng.IntN(100); {
	case r < 35:
		return w.document(kindStatic)
	case r < 40:
		return w.document(kindHead)
	case r < 60:
		return w.conditional()
	case r < 90:
		return w.search()
	default:
		return w.notFound()
	}
}

// document asks for a random document: a list, a course or a class.
func (w *worker) document(kind string) target {
	var route string
	switch r := w.rng.IntN(10); {
	case r < 3:
		route = pickOne(w.rng, w.cat.lists)
	case r < 5:
		route = pickOne(w.rng, w.cat.courses)
	default:
		route = pickOne(w.rng, w.cat.classes)
	}
	t := target{kind: kind, method: "GET", path: routePath(route), route: route, gzip: w.rng.IntN(2) == 0}
	if kind == kindHead {
		t.method = "HEAD"
	}
	return t
}

// conditional asks again for a document this worker has had, with the tag it got; a new
// snapshot may have changed the document meanwhile, so the answer is 304 or 200.
func (w *worker) conditional() target {
	if len(w.tagged) == 0 {
		return w.document(kindStatic)
	}
	k := pickOne(w.rng, w.tagged)
	route, gz := strings.CutSuffix(k, "\x00gz")
	return target{kind: kindConditional, method: "GET", path: routePath(route), route: route, gzip: gz, inm: w.etags[k]}
}

// searchWords are course-name fragments of the seeded catalogue (builder/seed), and one
// that matches nothing.
var searchWords = []string{"python", "Welding", "intro", "safety", "EXCEL", "level 2", "no such course"}

// search asks for a page of the class search, over all courses or one.
func (w *worker) search() target {
	limit := 1 + w.rng.IntN(50)
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	day := time.Now().AddDate(0, 0, w.rng.IntN(120)).Format("01-02-2006")
	switch w.rng.IntN(5) {
	case 0:
		q.Set("search", pickOne(w.rng, searchWords))
	case 1:
		q.Set("start", day)
		q.Set("page", fmt.Sprint(1+w.rng.IntN(3)))
	case 2:
		q.Set("date", day)
	case 3:
		q.Set("start", "invalid date") // accepted and ignored (D8)
		q.Set("search", pickOne(w.rng, searchWords))
	default:
		course := pickOne(w.rng, w.cat.courseIDs)
		return target{kind: kindSearch, method: "GET", path: "/public/course/" + course + "/classes?" + q.Encode(),
			course: course, limit: limit}
	}
	return target{kind: kindSearch, method: "GET", path: "/public/classes?" + q.Encode(), limit: limit}
}

// missingPaths name documents no snapshot has: ids never given, or not ids at all (D15).
var missingPaths = []string{"/public/class/999999999", "/public/course/999999999", "/public/course/abc", "/public/class/-1"}

func (w *worker) notFound() target {
	return target{kind: kindNotFound, method: "GET", path: pickOne(w.rng, missingPaths)}
}

// badToken draws a request the edge must refuse for its credentials, whatever it asks for.
func (w *worker) badToken() target {
	t := w.document(kindBadToken)
	if w.rng.IntN(3) == 0 {
		t = w.search()
	}
	t.kind, t.method, t.route, t.inm = kindBadToken, "GET", "", etag{}
	t.auth = pickOne(w.rng, w.badAuth)
	if t.auth.name == queryTokenName {
		// A good token in the query string is not one (D21).
		t.path += sep(t.path) + "api_token=" + url.QueryEscape(w.goodToken)
	}
	return t
}

// queryTokenName is the bad authentication that sends a good token in the query string.
const queryTokenName = "good token in the query string"

// badAuthorizations returns the ways a bad-token request fails authentication: no header,
// not a token, a token with a wrong checksum, a well-formed token never issued, a revoked
// token, another scheme, no token after the scheme, and a good token in the wrong place.
func badAuthorizations(good, unissued, revoked string) []badAuth {
	last := "a"
	if good[len(good)-1] == 'a' {
		last = "b"
	}
	corrupt := good[:len(good)-1] + last // the checksum no longer matches
	return []badAuth{
		{"no Authorization header", ""},
		{"not a token", "Bearer not-a-token"},
		{"wrong checksum", "Bearer " + corrupt},
		{"never issued", "Bearer " + unissued},
		{"revoked", "Bearer " + revoked},
		{"Basic scheme", "Basic c29hazpzb2Fr"},
		{"no token after Bearer", "Bearer"},
		{queryTokenName, ""},
	}
}

// routePath is the request path of a manifest route: the course-list variants carry their
// types in the query, which must be escaped ("Brick and Mortar").
func routePath(route string) string {
	path, query, ok := strings.Cut(route, "?")
	if !ok {
		return route
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return route // the builder's own route: never malformed
	}
	return path + "?" + q.Encode()
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

func pickOne[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }
