package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// manifests reads, once each, the manifests of the snapshots the edge names in its
// X-Catalogue-Snapshot header: they hold the hash of every document of the snapshot, which
// is what a response's body must hash to.
type manifests struct {
	store snapshot.Getter
	mu    sync.Mutex
	byID  map[string]*manifestSlot
}

// manifestSlot holds one manifest; its lock makes the workers that want it wait for one read.
type manifestSlot struct {
	mu sync.Mutex
	m  *snapshot.Manifest
}

// manifestAttempts bounds the reads of one manifest: a store busy with the builder's uploads
// may fail one read, and a manifest that cannot be read leaves responses unverified.
const manifestAttempts = 3

func newManifests(st snapshot.Getter) *manifests {
	return &manifests{store: st, byID: map[string]*manifestSlot{}}
}

// get returns the manifest of snapshot id.
func (ms *manifests) get(id string) (*snapshot.Manifest, error) {
	ms.mu.Lock()
	slot := ms.byID[id]
	if slot == nil {
		slot = &manifestSlot{}
		ms.byID[id] = slot
	}
	ms.mu.Unlock()
	slot.mu.Lock()
	defer slot.mu.Unlock()
	var err error
	for i := 0; slot.m == nil && i < manifestAttempts; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		slot.m, err = snapshot.ReadManifest(ctx, ms.store, id)
		cancel()
	}
	if slot.m == nil {
		return nil, fmt.Errorf("read the manifest of snapshot %s: %w", id, err)
	}
	return slot.m, nil
}

// catalogue is what the traffic asks for, taken from the snapshot current at start: the
// routes of the lists (the course list and its type variants, popular), of every course and
// of every class. The soak only ever adds and changes classes, so each of these routes is
// in every later snapshot too.
type catalogue struct {
	lists, courses, classes []string
	courseIDs               []string
}

func newCatalogue(m *snapshot.Manifest) (*catalogue, error) {
	c := &catalogue{}
	routes := make([]string, 0, len(m.Documents))
	for r := range m.Documents {
		routes = append(routes, r)
	}
	sort.Strings(routes) // the same traffic for the same seed
	for _, r := range routes {
		switch {
		case snapshot.IsCourseRoute(r):
			c.courses = append(c.courses, r)
			c.courseIDs = append(c.courseIDs, strings.TrimPrefix(r, snapshot.CourseRoutePrefix))
		case snapshot.IsClassRoute(r):
			c.classes = append(c.classes, r)
		default:
			c.lists = append(c.lists, r)
		}
	}
	if len(c.lists) == 0 || len(c.courses) == 0 || len(c.classes) == 0 {
		return nil, fmt.Errorf("snapshot %s has %d lists, %d courses and %d classes; the soak needs some of each",
			m.ID, len(c.lists), len(c.courses), len(c.classes))
	}
	return c, nil
}
