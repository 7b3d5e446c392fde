// Package snapshot defines the published format that the builder writes and the edge reads:
// content-addressed document objects, one manifest per snapshot, and a small pointer naming
// the current snapshot. Publishing writes the objects first, the manifest next and the
// pointer last, so a reader that follows the pointer always finds a complete snapshot.
//
// Layout in the store (relative to its prefix):
//
//	objects/ab/abcdef….json   one JSON document, named by the SHA-256 of its bytes
//	snapshots/<id>.json       the manifest of snapshot <id>: every route, its hash and size
//	deltas/<id>.json          for a snapshot built over another: what it changed (Delta)
//	current.json              the pointer: which snapshot is current
//
// A manifest and a delta share their Header. What each file holds is pinned byte for byte by
// TestFormatIsByteForByte: edges and builders of other versions read the same store.
package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trainingco/catalogue/builder/store"
)

// PointerKey is the key of the pointer to the current snapshot.
const PointerKey = "current.json"

// CourseTypes are the three course types, in the canonical order used in route names.
var CourseTypes = []string{"Blended", "Brick and Mortar", "Online"}

// Routes of the static documents, relative to the edge's base path.
const (
	RouteCourses = "/public/courses"
	RoutePopular = "/public/popular"
)

// CoursesRoute names the course list restricted to types. Types are sorted and deduplicated,
// and an empty list or the list of all three types names the unfiltered list, so every
// request maps to one document.
func CoursesRoute(types []string) string {
	t := slices.Clone(types)
	slices.Sort(t)
	t = slices.Compact(t)
	if len(t) == 0 || len(t) == len(CourseTypes) {
		return RouteCourses
	}
	return RouteCourses + "?type=" + strings.Join(t, "&type=")
}

// Prefixes of the routes of one course's and one class's document (CourseRoute, ClassRoute).
const (
	CourseRoutePrefix = "/public/course/"
	ClassRoutePrefix  = "/public/class/"
)

// CourseRoute names the document of one course.
func CourseRoute(id int64) string { return CourseRoutePrefix + strconv.FormatInt(id, 10) }

// ClassRoute names the document of one class.
func ClassRoute(id int64) string { return ClassRoutePrefix + strconv.FormatInt(id, 10) }

// IsClassRoute reports whether route names the document of a class.
func IsClassRoute(route string) bool { return strings.HasPrefix(route, ClassRoutePrefix) }

// IsCourseRoute reports whether route names the document of a course.
func IsCourseRoute(route string) bool { return strings.HasPrefix(route, CourseRoutePrefix) }

// RequiredRoutes are the routes every snapshot has, however empty its catalogue: the course
// list for every non-empty combination of types (D13) and the popular list.
func RequiredRoutes() []string {
	var routes []string
	for mask := 1; mask < 1<<len(CourseTypes); mask++ {
		var types []string
		for i, t := range CourseTypes {
			if mask&(1<<i) != 0 {
				types = append(types, t)
			}
		}
		routes = append(routes, CoursesRoute(types))
	}
	return append(routes, RoutePopular)
}

// CountsOf counts the course and class documents among documents, and all of them.
func CountsOf(documents map[string]Entry) Counts {
	c := Counts{Documents: len(documents)}
	for r := range documents {
		switch {
		case IsClassRoute(r):
			c.Classes++
		case IsCourseRoute(r):
			c.Courses++
		}
	}
	return c
}

// Entry is one document of a snapshot.
type Entry struct {
	Hash string `json:"sha256"` // hex SHA-256 of the document's bytes; also names its object
	Size int64  `json:"size"`
	// Modified is the change number of a course or class document (Feed): given when its
	// content changed, kept while it does not. 0 on other routes and in manifests written
	// before the feeds.
	Modified int64 `json:"modified,omitempty"`
}

// Counts summarises a snapshot; the publish guard compares them between builds.
type Counts struct {
	Courses   int `json:"courses"`
	Classes   int `json:"classes"`
	Documents int `json:"documents"`
}

// ErrInvalidManifest means a manifest does not describe a whole snapshot: the documents it
// lists do not match its counts, or it lacks a route every snapshot has. A reader refuses
// it (an empty or truncated manifest would otherwise blank the catalogue it replaces).
var ErrInvalidManifest = errors.New("the manifest does not describe a whole snapshot")

// Header is what a snapshot says about itself beside its id and its documents: when and for
// which day it was built, what it counts and how it was built. Manifest and Delta embed it,
// so its fields are written in their place; the id stays outside, since a delta names its
// base between the two (TestFormatIsByteForByte).
type Header struct {
	BuiltAt  time.Time `json:"built_at"`
	Today    string    `json:"today"` // the date, YYYY-MM-DD, the documents were rendered for
	Timezone string    `json:"timezone"`
	Counts   Counts    `json:"counts"`
	Build    *Build    `json:"build,omitempty"` // nil in manifests written before builds were recorded
}

// Manifest lists every document of one snapshot.
type Manifest struct {
	ID string `json:"snapshot"`
	Header
	Documents map[string]Entry `json:"documents"`      // route -> entry
	Feed      *Feed            `json:"feed,omitempty"` // nil in manifests written before the feeds
}

// Check returns an error wrapping ErrInvalidManifest when the documents m lists do not
// match its counts (courses, classes and documents) or lack a route of RequiredRoutes.
func (m *Manifest) Check() error {
	if got := CountsOf(m.Documents); got != m.Counts {
		return fmt.Errorf("check manifest %s: it lists %d courses, %d classes and %d documents but counts %d, %d and %d: %w",
			m.ID, got.Courses, got.Classes, got.Documents, m.Counts.Courses, m.Counts.Classes, m.Counts.Documents, ErrInvalidManifest)
	}
	for _, r := range RequiredRoutes() {
		if _, ok := m.Documents[r]; !ok {
			return fmt.Errorf("check manifest %s: it has no document %s: %w", m.ID, r, ErrInvalidManifest)
		}
	}
	return nil
}

// Triggers of a build (Build.Trigger).
const (
	TriggerRun      = "run"      // builder run
	TriggerStart    = "start"    // builder serve starting
	TriggerSchedule = "schedule" // builder.schedule
	TriggerMidnight = "midnight" // a new day in timezone: upcoming classes and can_register move
	TriggerListen   = "listen"   // builder serve (re)connected to the primary: notifications may have been missed
	TriggerChange   = "change"   // notifications of committed changes
	TriggerRetry    = "retry"    // builder serve retrying a failed build
	// TriggerRollback: builder rollback, which renders nothing and publishes the documents of
	// an earlier snapshot (Build.Restores) again, with new change numbers (D39).
	TriggerRollback = "rollback"
)

// MaxBuildRoutes is how many changed or removed routes a Build lists.
const MaxBuildRoutes = 50

// Build records how a snapshot was built; builder status shows it.
type Build struct {
	Trigger string `json:"trigger"` // one of the Trigger constants
	// Incremental is set when only the documents a change can affect were rendered and the
	// others were taken from the snapshot Base.
	Incremental bool   `json:"incremental,omitempty"`
	Base        string `json:"base,omitempty"`
	// Restores is set by a rollback: the snapshot whose documents this one serves again (the
	// first one built with them, when the rollback was to another rollback's snapshot).
	Restores string `json:"restores,omitempty"`
	// Notifications counts, per table, the change notifications the build answers;
	// NoticedAt is when the first of them arrived.
	Notifications map[string]int `json:"notifications,omitempty"`
	NoticedAt     *time.Time     `json:"noticed_at,omitempty"`
	// Rendered counts the documents rendered; Changed those whose content differs from the
	// previous snapshot's, new ones included; Removed the routes the previous one had and
	// this one has not. Routes lists the first MaxBuildRoutes of the changed and removed
	// routes, sorted.
	Rendered int      `json:"rendered"`
	Changed  int      `json:"changed"`
	Removed  int      `json:"removed"`
	Routes   []string `json:"routes,omitempty"`
}

// Pointer is the content of PointerKey.
type Pointer struct {
	ID          string    `json:"snapshot"`
	PublishedAt time.Time `json:"published_at"`
	// Previous are the kept snapshots that were current before this one, the most recently
	// current first. A manifest that neither ID nor Previous names was never published (its
	// build stopped between manifest and pointer) or is no longer kept. Nil in a pointer
	// written before the list existed; an empty list is written as [] so the two differ.
	Previous []string `json:"previous"`
	// Base, when set, is the snapshot this one was built over: a reader that holds Base
	// can load this one from its delta (DeltaKey) rather than its manifest.
	Base string `json:"base,omitempty"`
}

// Hash returns the hex SHA-256 of b.
func Hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ObjectPrefix is the prefix under which every document object is stored.
const ObjectPrefix = "objects/"

// ObjectKey is the key of the object holding the document with the given hash.
func ObjectKey(hash string) string { return ObjectPrefix + hash[:2] + "/" + hash + ".json" }

// HashFromObjectKey returns the hash of a document object's key, or "" if key is not one
// that ObjectKey writes.
func HashFromObjectKey(key string) string {
	rest, ok := strings.CutPrefix(key, ObjectPrefix)
	if !ok || len(rest) < 3 {
		return ""
	}
	hash, ok := strings.CutSuffix(rest[3:], ".json")
	if !ok || len(hash) < 2 || ObjectKey(hash) != key {
		return ""
	}
	return hash
}

// ManifestKey is the key of the manifest of snapshot id.
func ManifestKey(id string) string { return "snapshots/" + id + ".json" }

// ManifestPrefix is the prefix under which every manifest is stored.
const ManifestPrefix = "snapshots/"

// IDFromManifestKey returns the snapshot id of a manifest key, or "" if key is not one.
func IDFromManifestKey(key string) string {
	if !strings.HasPrefix(key, ManifestPrefix) || !strings.HasSuffix(key, ".json") {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(key, ManifestPrefix), ".json")
}

// NewID returns a snapshot id for a build at t. Ids sort in build order, which is what
// "the snapshot before" means for rollback and what keep counts.
func NewID(t time.Time, salt string) string {
	return t.UTC().Format(idTime) + "-" + Hash([]byte(salt))[:8]
}

const idTime = "20060102T150405.000Z"

// IDTime returns the build time NewID put in id; ok is false for an id it did not make.
func IDTime(id string) (t time.Time, ok bool) {
	stamp, _, _ := strings.Cut(id, "-")
	t, err := time.Parse(idTime, stamp)
	return t, err == nil
}

// ErrNoSnapshot means the store has no current snapshot yet.
var ErrNoSnapshot = errors.New("no snapshot has been published yet")

// Getter reads objects; store.Store satisfies it.
type Getter interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// Size caps of what the readers below accept, so that an object grown by a fault or an
// attacker with write access to the store cannot make a reader allocate what it says.
// A manifest takes about 110 bytes per document (11 MB at 100,000 documents); the pointer
// lists at most builder.keep ids.
const (
	MaxPointerSize  = 1 << 20   // 1 MiB
	MaxManifestSize = 256 << 20 // 256 MiB: over 2 million documents
	MaxDocumentSize = 64 << 20  // 64 MiB, whatever a manifest entry says
)

// maxGetter is the part of store.Store that reads an object only up to a size.
type maxGetter interface {
	GetMax(ctx context.Context, key string, limit int64) ([]byte, error)
}

// GetMax reads key from s, refusing more than limit bytes: through GetMax when s has it,
// so that nothing past limit+1 bytes is read, and after the fact otherwise.
func GetMax(ctx context.Context, s Getter, key string, limit int64) ([]byte, error) {
	if m, ok := s.(maxGetter); ok {
		return m.GetMax(ctx, key, limit)
	}
	b, err := s.Get(ctx, key)
	if err == nil && int64(len(b)) > limit {
		return nil, fmt.Errorf("get %s: %d bytes, at most %d allowed: %w", key, len(b), limit, store.ErrTooLarge)
	}
	return b, err
}

// Putter writes objects; store.Store satisfies it.
type Putter interface {
	Put(ctx context.Context, key string, body []byte) error
}

// WriteManifest stores m. Every document it names must be stored before it.
func WriteManifest(ctx context.Context, s Putter, m *Manifest) error {
	b, err := encodeManifest(m)
	if err != nil {
		return fmt.Errorf("encode manifest %s: %w", m.ID, err)
	}
	if err := s.Put(ctx, ManifestKey(m.ID), b); err != nil {
		return fmt.Errorf("write manifest %s: %w", m.ID, err)
	}
	return nil
}

// WritePointer makes p.ID the current snapshot: the last write of a publication, after its
// manifest.
func WritePointer(ctx context.Context, s Putter, p Pointer) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode pointer: %w", err)
	}
	if err := s.Put(ctx, PointerKey, b); err != nil {
		return fmt.Errorf("write pointer: %w", err)
	}
	return nil
}

// ReadPointer returns the current pointer, or ErrNoSnapshot.
func ReadPointer(ctx context.Context, s Getter) (Pointer, error) {
	b, err := GetMax(ctx, s, PointerKey, MaxPointerSize)
	if errors.Is(err, store.ErrNotFound) {
		return Pointer{}, ErrNoSnapshot
	}
	if err != nil {
		return Pointer{}, fmt.Errorf("read pointer: %w", err)
	}
	return ParsePointer(b)
}

// ErrMalformedPointer means PointerKey holds no pointer.
var ErrMalformedPointer = errors.New("malformed " + PointerKey)

// ParsePointer decodes the content of PointerKey.
func ParsePointer(b []byte) (Pointer, error) {
	var p Pointer
	if err := json.Unmarshal(b, &p); err != nil || p.ID == "" {
		return Pointer{}, fmt.Errorf("read pointer: %w", ErrMalformedPointer)
	}
	return p, nil
}

// ReadManifest returns the manifest of snapshot id. It does not Check it: a reader that
// serves it must.
func ReadManifest(ctx context.Context, s Getter, id string) (*Manifest, error) {
	b, err := GetMax(ctx, s, ManifestKey(id), MaxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", id, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", id, err)
	}
	if m.ID != id {
		return nil, fmt.Errorf("read manifest %s: it names snapshot %q", id, m.ID)
	}
	return &m, nil
}

// ReadHeader returns the header of the manifest of snapshot id, decoding nothing of its
// documents: a caller that lists snapshots (builder status) need not build the map of
// each one's 100,000 entries.
func ReadHeader(ctx context.Context, s Getter, id string) (Header, error) {
	b, err := GetMax(ctx, s, ManifestKey(id), MaxManifestSize)
	if err != nil {
		return Header{}, fmt.Errorf("read manifest %s: %w", id, err)
	}
	var h struct {
		ID string `json:"snapshot"`
		Header
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return Header{}, fmt.Errorf("read manifest %s: %w", id, err)
	}
	if h.ID != id {
		return Header{}, fmt.Errorf("read manifest %s: it names snapshot %q", id, h.ID)
	}
	return h.Header, nil
}

// ReadCurrent returns the manifest the pointer names, or ErrNoSnapshot.
func ReadCurrent(ctx context.Context, s Getter) (*Manifest, error) {
	p, err := ReadPointer(ctx, s)
	if err != nil {
		return nil, err
	}
	return ReadManifest(ctx, s, p.ID)
}

// ReadDocument returns the bytes of e and checks them against its hash, so that a corrupt or
// truncated object is never served. It reads at most e.Size+1 bytes of the object.
func ReadDocument(ctx context.Context, s Getter, e Entry) ([]byte, error) {
	if e.Size < 0 || e.Size > MaxDocumentSize {
		return nil, fmt.Errorf("read document %s: its size in the manifest, %d, is not between 0 and %d", e.Hash, e.Size, MaxDocumentSize)
	}
	b, err := GetMax(ctx, s, ObjectKey(e.Hash), e.Size)
	if errors.Is(err, store.ErrTooLarge) { // longer than the entry says: it cannot be the document
		return nil, fmt.Errorf("read document %s: content does not match its hash: %w", e.Hash, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read document %s: %w", e.Hash, err)
	}
	if Hash(b) != e.Hash {
		return nil, fmt.Errorf("read document %s: content does not match its hash", e.Hash)
	}
	return b, nil
}
