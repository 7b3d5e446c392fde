package publish

import (
	"context"
	"fmt"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// collect deletes the snapshots beyond Keep (never the current one, cur) and the objects
// that only they used. It computes the objects to delete from manifests alone, (objects of
// dropped manifests) minus (objects of kept manifests), so it never lists the store's
// objects. Objects go first and manifests last: if collection stops half-way the dropped
// manifests are still there and the next run deletes what is left.
func (p *Publisher) collect(ctx context.Context, cur, prev *snapshot.Manifest) (int, error) {
	p.report(Progress{Phase: PhaseCollecting})
	ids, err := p.manifestIDs(ctx)
	if err != nil {
		return 0, err
	}
	kept, dropped := partition(ids, p.keep(), cur.ID)
	if len(dropped) == 0 {
		return 0, nil
	}
	have := map[string]*snapshot.Manifest{cur.ID: cur}
	if prev != nil {
		have[prev.ID] = prev
	}
	used, err := p.hashSet(ctx, kept, have)
	if err != nil {
		return 0, fmt.Errorf("read kept snapshots: %w", err)
	}
	unused, err := p.hashSet(ctx, dropped, have)
	if err != nil {
		return 0, fmt.Errorf("read old snapshots: %w", err)
	}
	var keys []string
	for h := range unused {
		if !used[h] {
			keys = append(keys, snapshot.ObjectKey(h))
		}
	}
	if err := p.deleteKeys(ctx, keys); err != nil {
		return 0, err
	}
	keys = keys[:0]
	for _, id := range dropped {
		keys = append(keys, snapshot.ManifestKey(id))
	}
	if err := p.deleteKeys(ctx, keys); err != nil {
		return 0, err
	}
	return len(dropped), nil
}

// deleteKeys deletes keys; the stores split large deletions into requests themselves.
func (p *Publisher) deleteKeys(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := p.Store.Delete(ctx, keys...); err != nil {
		return fmt.Errorf("delete old objects: %w", err)
	}
	return nil
}
