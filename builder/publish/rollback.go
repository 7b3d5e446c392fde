package publish

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Rollback serves the documents of the kept snapshot id again; an empty id means the newest
// kept snapshot built before the documents the current one serves. It publishes them as a
// new snapshot (Build.Trigger rollback, Build.Restores naming them), diffed against the
// current one as a build is: the course and class documents it changes get change numbers
// above every number given out, those it drops tombstones, so that a partner following the
// feeds sees exactly what the rollback changed (D39); reusing the old snapshot would serve
// numbers the feeds announced long ago. It checks first that the snapshot's manifest is
// sound and that every object it names is in the store, so a rollback never publishes a
// snapshot the edge could not load. When the current snapshot serves id's documents
// already, nothing is published and the Result describes the current snapshot.
func (p *Publisher) Rollback(ctx context.Context, id string) (Result, error) {
	start := p.now()
	ptr, err := snapshot.ReadPointer(ctx, p.Store)
	if err != nil {
		return Result{}, fmt.Errorf("roll back: %w", err)
	}
	ids, err := p.manifestIDs(ctx)
	if err != nil {
		return Result{}, err
	}
	kept, _ := partition(ids, p.keep(), ptr)
	hs, err := p.readHeaders(ctx, kept)
	if err != nil {
		return Result{}, fmt.Errorf("roll back: %w", err)
	}
	origins := make(map[string]string, len(kept))
	for i, k := range kept {
		origins[k] = origin(k, hs[i])
	}
	target, err := rollbackTarget(kept, origins, ptr.ID, id)
	if err != nil {
		return Result{}, err
	}
	cur, err := snapshot.ReadManifest(ctx, p.Store, ptr.ID)
	if err != nil {
		return Result{}, fmt.Errorf("roll back: %w", err)
	}
	if origins[target] == origins[ptr.ID] {
		return Result{SnapshotID: cur.ID, Documents: len(cur.Documents), Manifest: cur}, nil
	}
	old, err := snapshot.ReadManifest(ctx, p.Store, target)
	if err == nil {
		err = p.verify(ctx, old)
	}
	if err != nil {
		return Result{}, fmt.Errorf("roll back to %s: %w", target, err)
	}
	res, err := p.finish(ctx, start, cur, restored(start, old, origins[target]), nil, nil)
	if err != nil {
		return res, fmt.Errorf("roll back to %s: %w", target, err)
	}
	return res, nil
}

// origin is the snapshot whose documents snapshot id, with header h, serves: the one a
// rollback restored, or its own.
func origin(id string, h snapshot.Header) string {
	if h.Build != nil && h.Build.Restores != "" {
		return h.Build.Restores
	}
	return id
}

// restored is the manifest of a rollback begun at start to old's documents, which were
// first built in snapshot origin. Its documents keep old's objects; finish gives them their
// change numbers against the current snapshot.
func restored(start time.Time, old *snapshot.Manifest, origin string) *snapshot.Manifest {
	h := old.Header
	h.BuiltAt = start.UTC()
	h.Build = &snapshot.Build{Trigger: snapshot.TriggerRollback, Restores: origin}
	return &snapshot.Manifest{ID: snapshot.NewID(start, randomSalt()), Header: h, Documents: maps.Clone(old.Documents)}
}

// rollbackTarget picks the snapshot to roll back to among kept (newest first), whose
// origins are the snapshots whose documents they serve: id, or without it the newest kept
// whose documents were built before those of current.
func rollbackTarget(kept []string, origins map[string]string, current, id string) (string, error) {
	if id == "" {
		for _, k := range kept {
			if origins[k] < origins[current] {
				return k, nil
			}
		}
		return "", fmt.Errorf("roll back from %s: %w", current, ErrNoEarlier)
	}
	for _, k := range kept {
		if k == id {
			return id, nil
		}
	}
	return "", fmt.Errorf("roll back: snapshot %q is not kept (kept, newest first: %s)", id, strings.Join(kept, ", "))
}

// verifySample is how many documents Rollback reads back and checks against their hashes,
// on top of checking that every object exists.
const verifySample = 16

// verify checks that every object manifest m names exists, and that a sample of them hold
// the bytes their hashes promise.
func (p *Publisher) verify(ctx context.Context, m *snapshot.Manifest) error {
	present, err := p.listObjects(ctx, m)
	if err != nil {
		return err
	}
	entries := make([]snapshot.Entry, 0, len(m.Documents))
	for route, e := range m.Documents {
		if !present[snapshot.ObjectKey(e.Hash)] {
			return fmt.Errorf("the object of %s (%s) is missing", route, e.Hash)
		}
		entries = append(entries, e)
	}
	for range min(verifySample, len(entries)) {
		if _, err := snapshot.ReadDocument(ctx, p.Store, entries[rand.IntN(len(entries))]); err != nil {
			return err
		}
	}
	return nil
}

// listWorkers bounds the concurrent listings of verify.
const listWorkers = 16

// listObjects returns the keys of the objects that exist in the folders m's objects live in.
// Objects are spread over 256 folders by the first two hex digits of their hash; listing
// the folders concurrently is several times faster than one listing of 100,000 keys, which
// an S3 store pages through 1,000 keys at a time.
func (p *Publisher) listObjects(ctx context.Context, m *snapshot.Manifest) (map[string]bool, error) {
	folders := make(map[string]bool)
	for _, e := range m.Documents {
		k := snapshot.ObjectKey(e.Hash)
		folders[k[:strings.LastIndex(k, "/")+1]] = true
	}
	present := make(map[string]bool, len(m.Documents))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listWorkers)
	for f := range folders {
		g.Go(func() error {
			keys, err := p.Store.List(gctx, f)
			if err != nil {
				return fmt.Errorf("list objects: %w", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				present[k] = true
			}
			return nil
		})
	}
	return present, g.Wait()
}
