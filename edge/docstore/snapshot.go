package docstore

import (
	"crypto/sha256"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Snapshot is one snapshot held in memory, never changed after it is built: it is
// published through an atomic pointer and readers never lock.
//
// The indexes hold positions in docs rather than pointers: maps of a hundred thousand
// pointers would be scanned by every garbage collection, and under load the edge collects
// several times a second; maps without pointers are not scanned at all.
type Snapshot struct {
	id          string
	builtAt     time.Time
	publishedAt time.Time         // when the pointer to it was written; zero when not loaded from the store
	idHeader    []string          // the id as a header value, made once rather than per response
	head        snapshot.Manifest // the manifest without its documents, which the indexes hold
	docs        []Document        // each distinct document once; the indexes hold positions in it
	routes      map[string]docPos // route -> document: the course lists and popular
	courses     idIndex           // course id -> its document
	classes     idIndex           // class id -> its document
}

// ID is the snapshot's id, as the store's pointer names it.
func (s *Snapshot) ID() string { return s.id }

// BuiltAt is when the builder built the snapshot.
func (s *Snapshot) BuiltAt() time.Time { return s.builtAt }

// PublishedAt is when the builder wrote the pointer that named the snapshot, as the pointer
// says, for a snapshot loaded from the store; the zero time for one from edge.cache_dir.
func (s *Snapshot) PublishedAt() time.Time { return s.publishedAt }

// Today is the day, YYYY-MM-DD, the builder rendered the snapshot for (D1); "" if its
// manifest does not say.
func (s *Snapshot) Today() string { return s.head.Today }

// IDHeader is ID as a header value (X-Catalogue-Snapshot), capped so that nothing appends
// into it: made once per snapshot, it costs a response no allocation.
func (s *Snapshot) IDHeader() []string { return s.idHeader }

// docPos is one more than the position of a document in its snapshot's docs (see at).
type docPos uint32

// Route returns the document of a list route (the course lists and popular), or nil.
func (s *Snapshot) Route(r string) *Document { return s.at(s.routes[r]) }

// Course returns the document of course id, or nil.
func (s *Snapshot) Course(id int64) *Document { return s.at(s.courses.get(id)) }

// Class returns the document of class id, or nil.
func (s *Snapshot) Class(id int64) *Document { return s.at(s.classes.get(id)) }

// at returns the document a stored position p names. Positions are stored one up, so
// that the zero docPos, what a map gives for a missing key, names no document.
func (s *Snapshot) at(p docPos) *Document {
	if p == 0 {
		return nil
	}
	return &s.docs[p-1]
}

// docIndex holds documents by hash: those of a snapshot a load may reuse, or those a load
// fetched.
type docIndex map[[sha256.Size]byte]*Document

// Route prefixes of the single-course and single-class documents, taken from the
// snapshot package so that the names have one definition.
var (
	coursePrefix = strings.TrimSuffix(snapshot.CourseRoute(1), "1")
	classPrefix  = strings.TrimSuffix(snapshot.ClassRoute(1), "1")
)

// newMemSnapshot indexes the documents of m, which docs holds by hash (each hash of m and
// no other), copying each into the snapshot once.
func newMemSnapshot(m *snapshot.Manifest, docs docIndex) (*Snapshot, error) {
	s := &Snapshot{
		id:       m.ID,
		builtAt:  m.BuiltAt,
		idHeader: []string{m.ID}[:1:1],
		head:     *m,
		docs:     make([]Document, 0, len(docs)),
		routes:   map[string]docPos{},
	}
	s.head.Documents = nil
	if len(docs) >= math.MaxUint32 {
		return nil, fmt.Errorf("index snapshot %s: %d documents are too many", m.ID, len(docs))
	}
	at := make(map[[sha256.Size]byte]docPos, len(docs))
	for h, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("index snapshot %s: document %x was not loaded", m.ID, h)
		}
		s.docs = append(s.docs, *d)
		at[h] = docPos(len(s.docs)) // one up: see at
	}
	var courses, classes []idPos
	for route, e := range m.Documents {
		h, _ := parseHash(e.Hash) // checked by checkManifest
		d := at[h]
		if d == 0 {
			return nil, fmt.Errorf("index snapshot %s: document %s of %s was not loaded", m.ID, e.Hash, route)
		}
		if id, ok := idOf(route, coursePrefix, snapshot.CourseRoute); ok {
			courses = append(courses, idPos{id, d})
		} else if id, ok := idOf(route, classPrefix, snapshot.ClassRoute); ok {
			classes = append(classes, idPos{id, d})
		} else {
			s.routes[route] = d
		}
	}
	s.courses, s.classes = newIDIndex(courses), newIDIndex(classes)
	return s, nil
}

// routeCount is the number of routes of s.
func (s *Snapshot) routeCount() int { return len(s.routes) + s.courses.n + s.classes.n }

// index returns the documents of s by hash, for a load to reuse. It is built when a load
// needs it rather than kept, which would cost its size for the snapshot's whole life.
func (s *Snapshot) index() docIndex {
	idx := make(docIndex, len(s.docs))
	for i := range s.docs {
		idx[s.docs[i].hash] = &s.docs[i]
	}
	return idx
}

// manifest returns the manifest of s again, for the disk cache.
func (s *Snapshot) manifest() *snapshot.Manifest {
	m := s.head
	m.Documents = make(map[string]snapshot.Entry, s.routeCount())
	add := func(route string, p docPos) {
		d := s.at(p)
		m.Documents[route] = snapshot.Entry{Hash: d.hexHash(), Size: int64(len(d.Body()))}
	}
	for route, d := range s.routes {
		add(route, d)
	}
	s.courses.each(func(id int64, d docPos) { add(snapshot.CourseRoute(id), d) })
	s.classes.each(func(id int64, d docPos) { add(snapshot.ClassRoute(id), d) })
	return &m
}

// idOf returns the id of route when it is the route of one course or class, by prefix,
// written exactly as name(id) writes it: a positive id without sign or leading zeros.
func idOf(route, prefix string, name func(int64) string) (int64, bool) {
	rest, ok := strings.CutPrefix(route, prefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0 && name(id) == route
}

// checkManifest refuses a manifest whose entries could not name an object: a hash that is
// not 64 lowercase hex digits would make an invalid object key.
func checkManifest(m *snapshot.Manifest) error {
	for route, e := range m.Documents {
		if _, ok := parseHash(e.Hash); !ok {
			return fmt.Errorf("check manifest %s: route %s has a malformed hash %q", m.ID, route, e.Hash)
		}
	}
	return nil
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
