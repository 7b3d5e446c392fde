package docstore

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Snapshot is one snapshot held in memory, never changed after it is built: it is
// published through an atomic pointer and readers never lock.
//
// A snapshot loaded from the delta of a change build is made from the one it was built
// over by copying only what the change touched (patch.go): the two share the pages of
// their indexes that the change did not touch, and every unchanged document's bytes.
type Snapshot struct {
	id          string
	publishedAt time.Time            // when the pointer to it was written; zero when not loaded from the store
	idHeader    []string             // the id as a header value, made once rather than per response
	head        snapshot.Manifest    // the manifest without its documents, which the indexes hold
	routes      map[string]*Document // route -> document: the course lists and popular
	courses     idIndex              // course id -> its document
	classes     idIndex              // class id -> its document
	held        holding              // the chunks its documents are in (arena.go)
	feeds       [2][]feedItem        // the RPDE feeds of courses and classes (feed.go)
}

// ID is the snapshot's id, as the store's pointer names it.
func (s *Snapshot) ID() string { return s.id }

// BuiltAt is when the builder built the snapshot.
func (s *Snapshot) BuiltAt() time.Time { return s.head.BuiltAt }

// PublishedAt is when the builder wrote the pointer that named the snapshot, as the pointer
// says, for a snapshot loaded from the store; the zero time for one from edge.cache_dir.
func (s *Snapshot) PublishedAt() time.Time { return s.publishedAt }

// Today is the day, YYYY-MM-DD, the builder rendered the snapshot for (D1); "" if its
// manifest does not say.
func (s *Snapshot) Today() string { return s.head.Today }

// Timezone is the time zone the builder rendered the snapshot in (its timezone).
func (s *Snapshot) Timezone() string { return s.head.Timezone }

// IDHeader is ID as a header value (X-Catalogue-Snapshot), capped so that nothing appends
// into it: made once per snapshot, it costs a response no allocation.
func (s *Snapshot) IDHeader() []string { return s.idHeader }

// Route returns the document of a list route (the course lists and popular), or nil.
func (s *Snapshot) Route(r string) *Document { return s.routes[r] }

// Course returns the document of course id, or nil.
func (s *Snapshot) Course(id int64) *Document { return s.courses.get(id) }

// Class returns the document of class id, or nil.
func (s *Snapshot) Class(id int64) *Document { return s.classes.get(id) }

// docIndex holds documents by hash: those of a snapshot a load may reuse, or those a load
// fetched.
type docIndex map[[sha256.Size]byte]*Document

// Kinds of route, as routeKind sorts them.
const (
	listRoute = iota
	courseRoute
	classRoute
)

// routeKind says which index holds route, and the id it is indexed by: a course or class
// by id when the route is one as snapshot.CourseRoute or ClassRoute writes it.
func routeKind(route string) (kind int, id int64) {
	switch k, id, ok := snapshot.FeedRoute(route); {
	case ok && k == snapshot.KindCourse:
		return courseRoute, id
	case ok && k == snapshot.KindClass:
		return classRoute, id
	}
	return listRoute, 0
}

// lookup returns the document of route, or nil.
func (s *Snapshot) lookup(route string) *Document {
	switch kind, id := routeKind(route); kind {
	case courseRoute:
		return s.courses.get(id)
	case classRoute:
		return s.classes.get(id)
	}
	return s.routes[route]
}

// newMemSnapshot indexes the documents of m, which docs holds by hash (each hash of m and
// no other).
func newMemSnapshot(m *snapshot.Manifest, docs docIndex) (*Snapshot, error) {
	s := newHead(m)
	s.routes = map[string]*Document{}
	s.held = holding{refs: map[*chunk]int32{}}
	var courses, classes []idDoc
	for route, e := range m.Documents {
		h, _ := parseHash(e.Hash) // checked by checkManifest
		d := docs[h]
		if d == nil {
			return nil, fmt.Errorf("index snapshot %s: document %s of %s was not loaded", m.ID, e.Hash, route)
		}
		s.held.add(d)
		switch kind, id := routeKind(route); kind {
		case courseRoute:
			courses = append(courses, idDoc{id, d})
		case classRoute:
			classes = append(classes, idDoc{id, d})
		default:
			c := *d // its own copy: d may be in a page of another snapshot
			s.routes[route] = &c
		}
	}
	s.courses, s.classes = newIDIndex(courses), newIDIndex(classes)
	s.feeds = newFeeds(m)
	return s, nil
}

// newHead returns a snapshot of m's id and metadata, without documents.
func newHead(m *snapshot.Manifest) *Snapshot {
	s := &Snapshot{id: m.ID, idHeader: []string{m.ID}[:1:1], head: *m}
	s.head.Documents = nil
	return s
}

// routeCount is the number of routes of s.
func (s *Snapshot) routeCount() int { return len(s.routes) + s.courses.n + s.classes.n }

// each calls f for every route of s and its document: the lists in the order of their
// routes, then the courses and the classes in the order of their ids (sparse ones last).
func (s *Snapshot) each(f func(route string, d *Document)) {
	for _, r := range slices.Sorted(maps.Keys(s.routes)) {
		f(r, s.routes[r])
	}
	s.courses.each(func(id int64, d *Document) { f(snapshot.CourseRoute(id), d) })
	s.classes.each(func(id int64, d *Document) { f(snapshot.ClassRoute(id), d) })
}

// eachDoc is each without the routes, which cost a string each to make.
func (s *Snapshot) eachDoc(f func(d *Document)) {
	for _, d := range s.routes {
		f(d)
	}
	s.courses.each(func(_ int64, d *Document) { f(d) })
	s.classes.each(func(_ int64, d *Document) { f(d) })
}

// index returns the documents of s by hash, for a load to reuse. It is built when a load
// needs it rather than kept, which would cost its size for the snapshot's whole life.
func (s *Snapshot) index() docIndex {
	idx := make(docIndex, s.routeCount())
	s.eachDoc(func(d *Document) { idx[d.hash] = d })
	return idx
}

// manifest returns the manifest of s again, for the disk cache.
func (s *Snapshot) manifest() *snapshot.Manifest {
	m := s.head
	m.Documents = make(map[string]snapshot.Entry, s.routeCount())
	modified := s.modified()
	s.each(func(route string, d *Document) {
		m.Documents[route] = snapshot.Entry{Hash: d.hexHash(), Size: int64(len(d.Body())), Modified: modified[route]}
	})
	return &m
}

// checkManifest refuses a manifest whose entries could not name an object (a hash that is
// not 64 lowercase hex digits would make an invalid object key), and one that does not
// describe a whole snapshot (snapshot.Manifest.Check).
func checkManifest(m *snapshot.Manifest) error {
	for route, e := range m.Documents {
		if _, ok := parseHash(e.Hash); !ok {
			return fmt.Errorf("check manifest %s: route %s has a malformed hash %q", m.ID, route, e.Hash)
		}
	}
	// An empty or partial manifest would blank the catalogue it replaces (and the disk
	// cache, once saved): refused, with an error wrapping snapshot.ErrInvalidManifest.
	return m.Check()
}

// parseHash decodes a hash written as 64 lowercase hex digits, the only form object keys
// use.
func parseHash(h string) (sum [sha256.Size]byte, ok bool) {
	if len(h) != 2*sha256.Size {
		return sum, false
	}
	for i := range sum {
		hi, ok1 := hexDigit(h[2*i])
		lo, ok2 := hexDigit(h[2*i+1])
		if !ok1 || !ok2 {
			return sum, false
		}
		sum[i] = hi<<4 | lo
	}
	return sum, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
