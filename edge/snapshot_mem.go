package edge

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// document is one static document ready to send: its bytes, its gzip body made once, and
// the header values of each, built once so that a request only assigns them. Documents are
// immutable and shared between routes with the same content and between snapshots, which
// is what lets a new snapshot reuse every unchanged document instead of fetching it again.
//
// The header values are one-element slices with no spare capacity, assigned to the
// response's header map as they are: append on such a slice copies it, so a middleware
// that adds a value cannot write into the shared one.
type document struct {
	hash       string
	body       []byte
	gzipBody   []byte
	etag       []string // "<sha256>", the strong tag of the identity body
	gzipEtag   []string // "<sha256>-gz", a different strong tag for the gzip body (D25)
	length     []string // len(body) in decimal
	gzipLength []string // len(gzipBody) in decimal
}

// memSnapshot is one snapshot held in memory, never changed after it is built: it is
// published through an atomic pointer and readers never lock.
type memSnapshot struct {
	id       string
	builtAt  time.Time
	idHeader []string // X-Catalogue-Snapshot: <id>
	manifest *snapshot.Manifest
	routes   map[string]*document // route -> document: the course lists and popular
	courses  map[int64]*document  // course id -> its document
	classes  map[int64]*document  // class id -> its document
	byHash   map[string]*document // hash -> document, to reuse bodies in the next snapshot
}

// Route prefixes of the single-course and single-class documents, taken from the
// snapshot package so that the names have one definition.
var (
	coursePrefix = strings.TrimSuffix(snapshot.CourseRoute(1), "1")
	classPrefix  = strings.TrimSuffix(snapshot.ClassRoute(1), "1")
)

// header returns v as a header value that cannot be appended to in place.
func header(v string) []string { return []string{v}[:1:1] }

// newDocument prepares body, whose SHA-256 is hash, for serving: it compresses it once.
func newDocument(hash string, body []byte) (*document, error) {
	gz, err := gzipOnce(body)
	if err != nil {
		return nil, fmt.Errorf("compress document %s: %w", hash, err)
	}
	return &document{
		hash:       hash,
		body:       body,
		gzipBody:   gz,
		etag:       header(`"` + hash + `"`),
		gzipEtag:   header(`"` + hash + `-gz"`),
		length:     header(strconv.Itoa(len(body))),
		gzipLength: header(strconv.Itoa(len(gz))),
	}, nil
}

// gzipWriters are reused: a writer at BestCompression carries about a megabyte of state,
// and a snapshot can hold 100,000 documents.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression) // the level is valid, so no error
	return w
}}

// gzipOnce compresses b at the best level: each document is compressed once per snapshot
// that first brings it, never per request, so the slower level costs nothing per request.
func gzipOnce(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(b)/3 + 64)
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// newMemSnapshot indexes the documents of m, which docs holds by hash.
func newMemSnapshot(m *snapshot.Manifest, docs map[string]*document) (*memSnapshot, error) {
	s := &memSnapshot{
		id:       m.ID,
		builtAt:  m.BuiltAt,
		idHeader: header(m.ID),
		manifest: m,
		routes:   map[string]*document{},
		courses:  map[int64]*document{},
		classes:  map[int64]*document{},
		byHash:   make(map[string]*document, len(docs)),
	}
	for route, e := range m.Documents {
		d := docs[e.Hash]
		if d == nil {
			return nil, fmt.Errorf("index snapshot %s: document %s of %s was not loaded", m.ID, e.Hash, route)
		}
		s.byHash[e.Hash] = d
		if id, ok := idOf(route, coursePrefix, snapshot.CourseRoute); ok {
			s.courses[id] = d
		} else if id, ok := idOf(route, classPrefix, snapshot.ClassRoute); ok {
			s.classes[id] = d
		} else {
			s.routes[route] = d
		}
	}
	return s, nil
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
		if !isHexHash(e.Hash) {
			return fmt.Errorf("check manifest %s: route %s has a malformed hash %q", m.ID, route, e.Hash)
		}
	}
	return nil
}

func isHexHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !('0' <= h[i] && h[i] <= '9' || 'a' <= h[i] && h[i] <= 'f') {
			return false
		}
	}
	return true
}
