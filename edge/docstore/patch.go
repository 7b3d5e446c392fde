package docstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// errDeltaUnusable means a delta does not describe a snapshot over the one it is applied
// to: the caller reads the snapshot's manifest instead.
var errDeltaUnusable = errors.New("the delta does not apply")

// routeChange is one route a delta changes: its new document's hash, or its removal.
type routeChange struct {
	route  string
	kind   int   // routeKind's
	id     int64 // of a course or class route
	hash   [sha256.Size]byte
	remove bool
}

// patch returns the snapshot that delta d describes over s: s with the documents d adds or
// replaces and without the routes it removes, made in time and memory proportional to the
// change, not to the catalogue. Of d's documents it fetches only those that s does not
// hold at the same route (a change build lists documents it re-rendered, whatever came
// out) and that no reuse index holds; every document fetched goes into fetched too, when it
// is not nil, also when patch fails. The result shares every untouched document and index
// page with s, which stays as it was, unless compacted says it was copied whole (see
// compacted). An error wrapping errDeltaUnusable means d does not apply to s.
func (s *Snapshot) patch(ctx context.Context, g snapshot.Getter, d *snapshot.Delta, fetched docIndex, reuse ...docIndex) (next *Snapshot, compacted bool, err error) {
	changes, docs, missing, err := s.planDelta(d, reuse)
	if err != nil {
		return nil, false, fmt.Errorf("load snapshot %s from its delta over %s: %w", d.ID, s.id, err)
	}
	var size int64
	for _, e := range missing {
		if n := 2*e.Size + 64; n <= chunkSize/4 { // the body and a gzip body of at most as much; larger ones are mapped alone
			size += n
		}
	}
	if err := fetch(ctx, g, missing, sizedArena(int(size)), docs, fetched); err != nil {
		return nil, false, fmt.Errorf("load snapshot %s from its delta: %w", d.ID, err)
	}
	next = s.with(d, changes, docs)
	if next.held.wasteful() {
		next, err = next.compacted()
		return next, true, err
	}
	return next, false, nil
}

// planDelta lists the routes d changes in s (a route rendered again the same is no change),
// with those of their documents that reuse holds, by hash, and the entries to fetch, each
// hash once. It checks that d applies to s: over s,
// every hash well formed, and as many documents in the result as d counts.
func (s *Snapshot) planDelta(d *snapshot.Delta, reuse []docIndex) (changes []routeChange, docs docIndex, missing []snapshot.Entry, err error) {
	if d.Base != s.id {
		return nil, nil, nil, fmt.Errorf("%w: it is over %s", errDeltaUnusable, d.Base)
	}
	n := s.routeCount()
	removed := map[string]bool{}
	for _, r := range d.Removed {
		if _, replaced := d.Documents[r]; replaced || removed[r] || s.lookup(r) == nil {
			continue
		}
		removed[r] = true
		kind, id := routeKind(r)
		changes = append(changes, routeChange{route: r, kind: kind, id: id, remove: true})
		n--
	}
	docs = docIndex{}
	for r, e := range d.Documents {
		h, ok := parseHash(e.Hash)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%w: route %s has a malformed hash %q", errDeltaUnusable, r, e.Hash)
		}
		old := s.lookup(r)
		if old == nil {
			n++
		} else if old.hash == h {
			continue // rendered again, the same
		}
		kind, id := routeKind(r)
		changes = append(changes, routeChange{route: r, kind: kind, id: id, hash: h})
		if _, seen := docs[h]; seen {
			continue
		}
		if docs[h] = lookup(reuse, h); docs[h] == nil {
			missing = append(missing, e)
		}
	}
	if n != d.Counts.Documents {
		return nil, nil, nil, fmt.Errorf("%w: %d documents, the delta counts %d", errDeltaUnusable, n, d.Counts.Documents)
	}
	if err := s.checkDelta(d, removed); err != nil {
		return nil, nil, nil, err
	}
	return changes, docs, missing, nil
}

// checkDelta checks that d over s leaves a whole snapshot, as snapshot.Manifest.Check does
// for a manifest: its courses and classes as d counts them, and every route every snapshot
// has. removed are the routes of s that d removes.
func (s *Snapshot) checkDelta(d *snapshot.Delta, removed map[string]bool) error {
	courses, classes := s.head.Counts.Courses, s.head.Counts.Classes // s's were checked when it was loaded
	count := func(r string, by int) {
		switch {
		case snapshot.IsClassRoute(r):
			classes += by
		case snapshot.IsCourseRoute(r):
			courses += by
		}
	}
	for r := range removed {
		count(r, -1)
	}
	for r := range d.Documents {
		if s.lookup(r) == nil {
			count(r, 1)
		}
	}
	if courses != d.Counts.Courses || classes != d.Counts.Classes {
		return fmt.Errorf("%w: %d courses and %d classes, the delta counts %d and %d", errDeltaUnusable, courses, classes, d.Counts.Courses, d.Counts.Classes)
	}
	for _, r := range snapshot.RequiredRoutes() {
		if _, added := d.Documents[r]; !added && (removed[r] || s.lookup(r) == nil) {
			return fmt.Errorf("%w: the snapshot would have no document %s", errDeltaUnusable, r)
		}
	}
	return nil
}

// with returns s with changes made, their documents taken from docs by hash, as the
// snapshot d names.
func (s *Snapshot) with(d *snapshot.Delta, changes []routeChange, docs docIndex) *Snapshot {
	next := newHead(&snapshot.Manifest{ID: d.ID, Header: d.Header, Feed: d.Feed})
	next.routes = s.routes
	next.held = holding{refs: maps.Clone(s.held.refs), live: s.held.live}
	var courses, classes []idDoc
	routesOwned := false
	for _, c := range changes {
		if old := s.lookup(c.route); old != nil {
			next.held.remove(old)
		}
		var doc *Document
		if !c.remove {
			doc = docs[c.hash]
			next.held.add(doc)
		}
		switch c.kind {
		case courseRoute:
			courses = append(courses, idDoc{c.id, doc})
		case classRoute:
			classes = append(classes, idDoc{c.id, doc})
		default:
			if !routesOwned {
				next.routes, routesOwned = maps.Clone(s.routes), true
			}
			if doc == nil {
				delete(next.routes, c.route)
			} else {
				own := *doc
				next.routes[c.route] = &own
			}
		}
	}
	next.courses, next.classes = s.courses.with(courses), s.classes.with(classes)
	next.feeds = s.patchFeeds(d, changes)
	return next
}

// compacted returns s with every document copied into chunks of its own, so that the
// chunks its documents shared with documents no snapshot uses any more can go: what
// compact does for a load from a manifest, once the changes of many deltas have left the
// chunks holding too much. It costs what a load from the manifest does, without reading
// the store, every few thousand changes.
func (s *Snapshot) compacted() (*Snapshot, error) {
	docs := s.index()
	a := &arena{}
	if err := a.copyAll(docs); err != nil {
		return nil, fmt.Errorf("compact snapshot %s: %w", s.id, err)
	}
	if err := a.seal(); err != nil {
		return nil, fmt.Errorf("compact snapshot %s: %w", s.id, err)
	}
	return newMemSnapshot(s.manifest(), docs)
}
