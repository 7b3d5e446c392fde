package edge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// document is one static document ready to send: its bytes and its gzip body, made once
// when the document is first loaded, back to back in one buffer of exactly their size.
// Documents are immutable and shared between routes with the same content and between
// snapshots, which is what lets a new snapshot reuse every unchanged document instead of
// fetching and compressing it again.
//
// A catalogue has a hundred thousand documents of a few hundred bytes, so what a document
// holds besides its bytes counts (56 bytes): the hash is kept raw, its bytes are found by
// offsets rather than slices, and the header values are made per response (see response)
// rather than stored. The bytes of a snapshot's documents are in chunks outside the Go heap
// (snapshot_arena.go).
type document struct {
	hash  [sha256.Size]byte // of the body; it names the object and makes the ETags
	chunk *chunk            // the memory of its bytes, kept mapped while d is used
	off   uint32            // where its bytes start in chunk.mem: the body, then the gzip body
	split uint32            // off + len(body)
	end   uint32            // where its bytes end
}

// placed returns the document whose body of split bytes and gzip body end at off+n in c.
func placed(hash [sha256.Size]byte, c *chunk, off, split, n int) document {
	return document{hash: hash, chunk: c, off: uint32(off), split: uint32(off + split), end: uint32(off + n)}
}

func (d *document) bytes() []byte    { return d.chunk.mem[d.off:d.end:d.end] }
func (d *document) body() []byte     { return d.chunk.mem[d.off:d.split:d.split] }
func (d *document) gzipBody() []byte { return d.chunk.mem[d.split:d.end:d.end] }
func (d *document) hexHash() string  { return hex.EncodeToString(d.hash[:]) }

// response returns the body to send, with gzip or without, and its header values: the
// strong ETag "<sha256>" of the identity body or "<sha256>-gz" of the gzip body (D25) and
// the Content-Length, made in one allocation (headerText). Stored per document they would
// cost some 170 bytes each (two quoted 64-digit tags and their slices): 14 MB for the
// 83,000 documents of the benchmark's catalogue, against one small allocation per request.
func (d *document) response(gz bool) (body []byte, etag, length []string) {
	body = d.body()
	if gz {
		body = d.gzipBody()
	}
	v := new(headerText)
	t := append(v.buf[:0], '"')
	t = hex.AppendEncode(t, d.hash[:])
	if gz {
		t = append(t, "-gz"...)
	}
	t = append(t, '"')
	n := len(t)
	etag, length = v.values(strconv.AppendInt(t, int64(len(body)), 10), n)
	return body, etag, length
}

// memSnapshot is one snapshot held in memory, never changed after it is built: it is
// published through an atomic pointer and readers never lock.
//
// The indexes hold positions in docs rather than pointers: maps of a hundred thousand
// pointers would be scanned by every garbage collection, and under load the edge collects
// several times a second; maps without pointers are not scanned at all.
type memSnapshot struct {
	id       string
	builtAt  time.Time
	idHeader []string          // X-Catalogue-Snapshot: <id>
	head     snapshot.Manifest // the manifest without its documents, which the indexes hold
	docs     []document        // each distinct document once; the indexes hold positions in it
	routes   map[string]docPos // route -> document: the course lists and popular
	courses  idIndex           // course id -> its document
	classes  idIndex           // class id -> its document
}

// docPos is one more than the position of a document in its snapshot's docs (see at).
type docPos uint32

// route, course and class return the document of a list route, a course id or a class id,
// or nil.
func (s *memSnapshot) route(r string) *document  { return s.at(s.routes[r]) }
func (s *memSnapshot) course(id int64) *document { return s.at(s.courses.get(id)) }
func (s *memSnapshot) class(id int64) *document  { return s.at(s.classes.get(id)) }

// at returns the document a stored position p names. Positions are stored one up, so
// that the zero docPos, what a map gives for a missing key, names no document.
func (s *memSnapshot) at(p docPos) *document {
	if p == 0 {
		return nil
	}
	return &s.docs[p-1]
}

// docIndex holds documents by hash: those of a snapshot a load may reuse, or those a load
// fetched.
type docIndex map[[sha256.Size]byte]*document

// Route prefixes of the single-course and single-class documents, taken from the
// snapshot package so that the names have one definition.
var (
	coursePrefix = strings.TrimSuffix(snapshot.CourseRoute(1), "1")
	classPrefix  = strings.TrimSuffix(snapshot.ClassRoute(1), "1")
)

// header returns v as a header value that cannot be appended to in place.
func header(v string) []string { return []string{v}[:1:1] }

// newMemSnapshot indexes the documents of m, which docs holds by hash (each hash of m and
// no other), copying each into the snapshot once.
func newMemSnapshot(m *snapshot.Manifest, docs docIndex) (*memSnapshot, error) {
	s := &memSnapshot{
		id:       m.ID,
		builtAt:  m.BuiltAt,
		idHeader: header(m.ID),
		head:     *m,
		docs:     make([]document, 0, len(docs)),
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
func (s *memSnapshot) routeCount() int { return len(s.routes) + s.courses.n + s.classes.n }

// index returns the documents of s by hash, for a load to reuse. It is built when a load
// needs it rather than kept, which would cost its size for the snapshot's whole life.
func (s *memSnapshot) index() docIndex {
	idx := make(docIndex, len(s.docs))
	for i := range s.docs {
		idx[s.docs[i].hash] = &s.docs[i]
	}
	return idx
}

// manifest returns the manifest of s again, for the disk cache.
func (s *memSnapshot) manifest() *snapshot.Manifest {
	m := s.head
	m.Documents = make(map[string]snapshot.Entry, s.routeCount())
	add := func(route string, p docPos) {
		d := s.at(p)
		m.Documents[route] = snapshot.Entry{Hash: d.hexHash(), Size: int64(len(d.body()))}
	}
	for route, d := range s.routes {
		add(route, d)
	}
	s.courses.each(func(id int64, d docPos) { add(snapshot.CourseRoute(id), d) })
	s.classes.each(func(id int64, d docPos) { add(snapshot.ClassRoute(id), d) })
	return &m
}

// idOf returns the id of route when it is the route of one course or class, by prefix,
// written exactly as name(id) writes it.
func idOf(route, prefix string, name func(int64) string) (int64, bool) {
	rest, ok := strings.CutPrefix(route, prefix)
	if !ok {
		return 0, false
	}
	id, ok := parseID(rest)
	return id, ok && name(id) == route
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
