package publish

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// manifestIDs returns the ids of every manifest in the store, oldest first: snapshot ids
// sort in build order (snapshot.NewID).
func (p *Publisher) manifestIDs(ctx context.Context) ([]string, error) {
	keys, err := p.Store.List(ctx, snapshot.ManifestPrefix)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var ids []string
	for _, k := range keys {
		if id := snapshot.IDFromManifestKey(k); id != "" && !strings.Contains(id, "/") {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// partition splits ids (oldest first) into the snapshots kept, newest first, and those to
// drop. Kept are the current snapshot and those that were current before it, keep in all
// (published); a manifest that was never published is dropped whatever its age. A pointer
// written before it listed earlier snapshots (Previous nil) keeps the newest keep and
// current, whatever its age: after a rollback the current snapshot may be older than all.
func partition(ids []string, keep int, ptr snapshot.Pointer) (kept, dropped []string) {
	pub := published(ptr, keep)
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if pub != nil && pub[id] || pub == nil && (len(kept) < keep || id == ptr.ID) {
			kept = append(kept, id)
		} else {
			dropped = append(dropped, id)
		}
	}
	return kept, dropped
}

// published returns the snapshots ptr keeps: its own and up to keep-1 earlier ones. It is
// nil for a pointer that does not list earlier snapshots.
func published(ptr snapshot.Pointer, keep int) map[string]bool {
	if ptr.Previous == nil {
		return nil
	}
	pub := map[string]bool{ptr.ID: true}
	for _, id := range ptr.Previous[:min(len(ptr.Previous), max(keep-1, 0))] {
		pub[id] = true
	}
	return pub
}

// nextPointer returns the pointer that makes id current after old (the zero Pointer when
// nothing was published): old's current snapshot becomes the first earlier one. kept are
// the snapshots old keeps, newest first (partition), which stand in for old.Previous when
// old does not list them.
func nextPointer(old snapshot.Pointer, id string, kept []string, keep int, now time.Time) snapshot.Pointer {
	earlier := old.Previous
	if earlier == nil {
		earlier = kept
	}
	prev := []string{}
	for _, e := range append([]string{old.ID}, earlier...) {
		if e != "" && e != id && !slices.Contains(prev, e) && len(prev) < keep-1 {
			prev = append(prev, e)
		}
	}
	return snapshot.Pointer{ID: id, PublishedAt: now.UTC(), Previous: prev}
}

// readHeaders returns the headers of the manifests ids, in the same order.
func (p *Publisher) readHeaders(ctx context.Context, ids []string) ([]snapshot.Header, error) {
	hs := make([]snapshot.Header, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, id := range ids {
		g.Go(func() error {
			h, err := snapshot.ReadHeader(gctx, p.Store, id)
			hs[i] = h
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return hs, nil
}
