// Package publish stores a rendered catalogue as one snapshot and keeps the store tidy.
//
// A publication writes, in this order: every document object the store does not hold yet,
// the snapshot's manifest, and last the pointer that makes the snapshot current. Until the
// pointer is written nothing a reader sees has changed, so a failure or a cancellation at
// any earlier moment leaves the current snapshot intact (decision D27). After the pointer,
// snapshots beyond Keep and the objects only they used are collected.
//
// Only one publisher may run against a store at a time; package builder guarantees it with
// a PostgreSQL advisory lock.
package publish

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// DefaultWorkers is the number of concurrent uploads. S3-compatible stores answer one small
// PUT in a few milliseconds, so storing 100,000 documents in well under a minute needs many
// requests in flight.
const DefaultWorkers = 64

// DefaultGrace is Publisher.Grace's default: far longer than any publication (a full build
// into MinIO takes about a minute, each store request attempt at most two).
const DefaultGrace = time.Hour

// ErrCollect is wrapped by the error Publish returns when the snapshot is published but
// deleting old snapshots failed; the next publication collects them.
var ErrCollect = errors.New("collecting old snapshots failed")

// ErrLockLost is wrapped by the error of a publication that stopped because CheckLock
// failed.
var ErrLockLost = errors.New("the builder lock was lost")

// ErrShrink is wrapped by the error that refuses a build which shrinks the catalogue by more
// than MaxShrink.
var ErrShrink = errors.New("catalogue shrank too much")

// Publisher publishes snapshots to Store. The zero values of Workers, Now and Progress are
// usable; Keep below 1 counts as 1.
type Publisher struct {
	Store store.Store
	// Keep is how many snapshots are kept in all, newest first, the current one included.
	Keep int
	// MaxShrink is the largest fraction (0..1) by which the course or class count may fall
	// against the current snapshot before Publish refuses without force. 0 refuses any fall.
	MaxShrink float64
	// Progress, when set, is told about each phase and the upload's progress. Calls are
	// serialised, so it need not be safe for concurrent use.
	Progress func(Progress)
	// Workers bounds concurrent uploads and deletions; 0 means DefaultWorkers.
	Workers int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// CheckLock, when set, says whether this publisher still holds the builder lock. It is
	// called before the pointer is written and before collection: a lock lost during a
	// build (its session ended) means another builder may be publishing, so this one
	// publishes nothing, or collects nothing when it has published already.
	CheckLock func(context.Context) error
	// Grace is how long a manifest that no pointer keeps is left alone after its build
	// started, with the objects it names, so that collection never deletes the work of a
	// build that is still publishing; 0 means DefaultGrace.
	Grace time.Duration
	// Own, when set, holds manifests this publisher's process published itself, by id
	// (builder serve keeps its last Keep). Collection takes them from memory rather than
	// read them back (a manifest of 100,000 documents is ~11 MB), and drops those that
	// fell out of Keep whatever their age: Grace protects the builds of another builder
	// that may still be publishing, and these were published, by this one. Without it, a
	// builder publishing a change every second would keep an hour of manifests.
	Own map[string]*snapshot.Manifest
	// Kept, when set, remembers the hashes of the kept manifests collection read from the
	// store, across the publications of a long-running builder (KeptHashes).
	Kept *KeptHashes
	// Retention is how long a deleted course or class is announced in the feeds
	// (feeds.retention, D36); 0 means DefaultRetention.
	Retention time.Duration

	wall       wallClock // the clock of change numbers; nil means real time (see wallClock)
	progressMu sync.Mutex
}

// Phases reported through Progress.
const (
	PhaseHashing    = "hashing"
	PhaseUploading  = "storing objects"
	PhaseManifest   = "writing manifest"
	PhasePointer    = "writing pointer"
	PhaseCollecting = "collecting old snapshots"
)

// Progress describes where a publication is. Done and Total count objects in PhaseUploading
// and documents otherwise.
type Progress struct {
	Phase string
	Done  int
	Total int
}

// Meta describes the build that produced the documents.
type Meta struct {
	Today    string // YYYY-MM-DD, the date the documents were rendered for
	Timezone string
	Counts   snapshot.Counts // Documents is set by Publish
	// Build says what started the build and what it answers; Publish fills in what it
	// rendered and what changed. The zero Build is a builder run.
	Build snapshot.Build
}

// Result summarises one publication.
type Result struct {
	SnapshotID    string
	Documents     int   // documents in the snapshot
	ObjectsStored int   // document objects written by this publication (new content only)
	BytesStored   int64 // bytes of those objects
	Collected     int   // old snapshots deleted after the pointer moved
	Duration      time.Duration
	// Manifest is the published manifest; a caller may keep it as the base of the next
	// PublishChanges, and must not modify it.
	Manifest *snapshot.Manifest
	// Feed is what the publication announces in the RPDE feeds: the position before it and
	// the courses and classes it changed.
	Feed FeedChanges
}

// FeedLast is the feeds' position after the publication (its manifest's Feed.Last), 0
// when it has none.
func (r Result) FeedLast() int64 {
	if r.Manifest == nil || r.Manifest.Feed == nil {
		return 0
	}
	return r.Manifest.Feed.Last
}

// Changed reports whether the publication changed any served document: a course or class
// (Feed) or another, such as popular or a course list, which no feed names (D41 announces
// either).
func (r Result) Changed() bool {
	if !r.Feed.Empty() {
		return true
	}
	return r.Manifest != nil && r.Manifest.Build != nil && r.Manifest.Build.Changed+r.Manifest.Build.Removed > 0
}

// Publish stores docs (route -> JSON bytes) as a new snapshot and makes it current. It
// refuses, with an error wrapping ErrShrink, a build whose course or class count fell by
// more than MaxShrink against the current snapshot, unless force is set. An error means
// nothing was published, except one wrapping ErrCollect, returned with a full Result.
func (p *Publisher) Publish(ctx context.Context, docs map[string][]byte, meta Meta, force bool) (Result, error) {
	cur, err := p.Current(ctx)
	if err != nil {
		return Result{}, err
	}
	return p.PublishOver(ctx, cur, docs, meta, force)
}

// PublishOver is Publish with the current snapshot's manifest already read by Current (nil
// when there is none), so that a caller can read it while it builds the documents.
func (p *Publisher) PublishOver(ctx context.Context, cur *snapshot.Manifest, docs map[string][]byte, meta Meta, force bool) (Result, error) {
	start := p.now()
	meta.Counts.Documents = len(docs)
	if cur != nil && !force {
		if err := p.guard(cur.Counts, meta.Counts); err != nil {
			return Result{}, err
		}
	}
	m := newManifest(start, meta, make(map[string]snapshot.Entry, len(docs)))
	m.Build.Rendered = len(docs)
	p.report(Progress{Phase: PhaseHashing, Total: len(docs)})
	todo := plan(docs, m, known(cur))
	return p.finish(ctx, start, cur, m, todo, nil)
}

// PublishChanges publishes a snapshot made of cur, the current snapshot's manifest, with the
// documents of docs added or replaced and the routes of removed dropped: the publication of
// a build that rendered only what a change affects. meta.Counts must count the courses and
// classes of the result. It is otherwise Publish: the same guard, order and errors.
func (p *Publisher) PublishChanges(ctx context.Context, cur *snapshot.Manifest, docs map[string][]byte, removed []string, meta Meta, force bool) (Result, error) {
	if cur == nil {
		return Result{}, errors.New("publish changes: there is no current snapshot to change")
	}
	start := p.now()
	m := newManifest(start, meta, maps.Clone(cur.Documents))
	for _, r := range removed {
		delete(m.Documents, r)
	}
	m.Build.Incremental, m.Build.Base, m.Build.Rendered = true, cur.ID, len(docs)
	// Only the routes of docs can hold new content: the objects of the others are stored.
	stored := make(map[string]bool, len(docs))
	for r := range docs {
		if e, ok := cur.Documents[r]; ok {
			stored[e.Hash] = true
		}
	}
	p.report(Progress{Phase: PhaseHashing, Total: len(docs)})
	todo := plan(docs, m, stored)
	m.Counts.Documents = len(m.Documents)
	if !force {
		if err := p.guard(cur.Counts, m.Counts); err != nil {
			return Result{}, err
		}
	}
	touched := slices.AppendSeq(slices.Clone(removed), maps.Keys(docs))
	return p.finish(ctx, start, cur, m, todo, touched)
}

// newManifest starts the manifest of a build begun at start.
func newManifest(start time.Time, meta Meta, docs map[string]snapshot.Entry) *snapshot.Manifest {
	b := meta.Build
	if b.Trigger == "" {
		b.Trigger = snapshot.TriggerRun
	}
	return &snapshot.Manifest{
		ID: snapshot.NewID(start, randomSalt()),
		Header: snapshot.Header{
			BuiltAt:  start.UTC(),
			Today:    meta.Today,
			Timezone: meta.Timezone,
			Counts:   meta.Counts,
			Build:    &b,
		},
		Documents: docs,
	}
}

// finish publishes m, whose documents are hashed and todo the objects not stored yet: it
// stores them, writes the manifest and the pointer, and collects old snapshots. touched,
// when not nil, are the only routes that can differ from cur.
func (p *Publisher) finish(ctx context.Context, start time.Time, cur, m *snapshot.Manifest, todo []object, touched []string) (Result, error) {
	feed, changes := number(cur, m, touched, start, p.wallClock().Now(), p.retention())
	m.Feed = feed
	recordChanges(m.Build, cur, m, touched)
	if err := checkNumbers(feed.Last); err != nil {
		return Result{}, fmt.Errorf("write manifest: %w", err)
	}
	stored, bytes, err := p.upload(ctx, todo)
	if err != nil {
		return Result{}, err
	}
	if touched != nil {
		if err := p.writeDelta(ctx, snapshot.NewDelta(m, cur.ID, touched)); err != nil {
			return Result{}, err
		}
	}
	if err := p.waitClock(ctx, feed.Last); err != nil {
		return Result{}, fmt.Errorf("write manifest: %w", err)
	}
	ptr, err := p.commit(ctx, m)
	if err != nil {
		return Result{}, err
	}
	res := Result{SnapshotID: m.ID, Documents: len(m.Documents), ObjectsStored: stored, BytesStored: bytes, Manifest: m, Feed: changes}
	// The snapshot is published; a failure to collect only delays collection to the next run,
	// which recomputes what to delete from the manifests it finds.
	collected, err := p.collect(ctx, ptr, m, cur)
	res.Collected = collected
	res.Duration = p.now().Sub(start)
	if err != nil {
		return res, fmt.Errorf("snapshot %s is published, but %w: %w", m.ID, ErrCollect, err)
	}
	return res, nil
}

// writeDelta stores d, after the objects it names and before the manifest and pointer.
func (p *Publisher) writeDelta(ctx context.Context, d *snapshot.Delta) error {
	p.report(Progress{Phase: PhaseManifest})
	return snapshot.WriteDelta(ctx, p.Store, d)
}

// recordChanges notes in b which routes of m differ from cur, the previous snapshot. Only
// the routes touched are compared when touched is not nil; every route otherwise.
func recordChanges(b *snapshot.Build, cur, m *snapshot.Manifest, touched []string) {
	var prev map[string]snapshot.Entry
	if cur != nil {
		prev = cur.Documents
	}
	if touched == nil {
		touched = slices.AppendSeq(slices.Collect(maps.Keys(m.Documents)), maps.Keys(prev))
	}
	slices.Sort(touched)
	touched = slices.Compact(touched)
	var routes []string
	b.Changed, b.Removed = 0, 0
	for _, r := range touched {
		old, before := prev[r]
		e, now := m.Documents[r]
		switch {
		case now && (!before || old.Hash != e.Hash):
			b.Changed++
		case before && !now:
			b.Removed++
		default:
			continue
		}
		if len(routes) < snapshot.MaxBuildRoutes {
			routes = append(routes, r)
		}
	}
	b.Routes = routes
}

// Current returns the manifest the pointer names, or nil when nothing is published yet.
func (p *Publisher) Current(ctx context.Context) (*snapshot.Manifest, error) {
	m, err := snapshot.ReadCurrent(ctx, p.Store)
	if errors.Is(err, snapshot.ErrNoSnapshot) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read current snapshot: %w", err)
	}
	return m, nil
}

// guard refuses a catalogue that shrank by more than MaxShrink: most often a broken
// replica or template, rarely a real mass withdrawal, which --force then confirms.
func (p *Publisher) guard(old, new snapshot.Counts) error {
	for _, c := range []struct {
		what     string
		old, new int
	}{{"courses", old.Courses, new.Courses}, {"classes", old.Classes, new.Classes}} {
		if c.old > 0 && float64(c.old-c.new)/float64(c.old) > p.MaxShrink {
			return fmt.Errorf("refuse to publish: public %s would fall from %d to %d, more than builder.max_shrink (%g) allows; run with --force to publish anyway: %w",
				c.what, c.old, c.new, p.MaxShrink, ErrShrink)
		}
	}
	return nil
}

// commit writes the manifest and then the pointer, which publishes the snapshot.
func (p *Publisher) commit(ctx context.Context, m *snapshot.Manifest) (snapshot.Pointer, error) {
	p.report(Progress{Phase: PhaseManifest, Done: len(m.Documents), Total: len(m.Documents)})
	if err := snapshot.WriteManifest(ctx, p.Store, m); err != nil {
		return snapshot.Pointer{}, err
	}
	base := ""
	if m.Build != nil && m.Build.Incremental {
		base = m.Build.Base // its delta is stored (finish)
	}
	return p.writePointer(ctx, m.ID, base)
}

// writePointer makes snapshot id current and returns the pointer it wrote, which
// remembers the snapshot it replaces (nextPointer) and names base, the snapshot id's delta
// is over, when it has one. The context is checked first so that a cancellation that
// arrived during the previous step publishes nothing.
func (p *Publisher) writePointer(ctx context.Context, id, base string) (snapshot.Pointer, error) {
	if err := ctx.Err(); err != nil {
		return snapshot.Pointer{}, fmt.Errorf("write pointer: %w", err)
	}
	p.report(Progress{Phase: PhasePointer})
	if err := p.checkLock(ctx); err != nil {
		return snapshot.Pointer{}, fmt.Errorf("write pointer: %w", err)
	}
	old, err := snapshot.ReadPointer(ctx, p.Store)
	if err != nil && !errors.Is(err, snapshot.ErrNoSnapshot) {
		return snapshot.Pointer{}, fmt.Errorf("write pointer: %w", err)
	}
	var kept []string
	if old.Previous == nil && old.ID != "" { // written before pointers listed earlier ones
		ids, err := p.manifestIDs(ctx)
		if err != nil {
			return snapshot.Pointer{}, fmt.Errorf("write pointer: %w", err)
		}
		kept, _ = partition(ids, p.keep(), old)
	}
	ptr := nextPointer(old, id, kept, p.keep(), p.now())
	ptr.Base = base
	if err := snapshot.WritePointer(ctx, p.Store, ptr); err != nil {
		return snapshot.Pointer{}, err
	}
	return ptr, nil
}

func (p *Publisher) report(pr Progress) {
	if p.Progress == nil {
		return
	}
	p.progressMu.Lock()
	defer p.progressMu.Unlock()
	p.Progress(pr)
}

func (p *Publisher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// checkLock returns an error wrapping ErrLockLost when CheckLock says the lock is gone.
func (p *Publisher) checkLock(ctx context.Context) error {
	if p.CheckLock == nil {
		return nil
	}
	if err := p.CheckLock(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrLockLost, err)
	}
	return nil
}

func (p *Publisher) grace() time.Duration { return cmp.Or(p.Grace, DefaultGrace) }

func (p *Publisher) keep() int { return max(p.Keep, 1) }

func (p *Publisher) workers() int {
	if p.Workers > 0 {
		return p.Workers
	}
	return DefaultWorkers
}

// randomSalt makes snapshot ids of builds in the same millisecond differ.
func randomSalt() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms.
	return hex.EncodeToString(b)
}
