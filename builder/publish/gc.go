package publish

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// collect deletes the snapshots beyond Keep (never the current one, cur, that ptr names),
// the manifests of builds that never published (partition), and the objects
// that only they used: (objects of dropped manifests) minus (objects of kept manifests),
// computed from manifests alone, so it never lists the store's 100,000 objects.
//
// The subtraction is done in the order that costs least. The new snapshot and the previous
// one are in memory and use almost every object an old snapshot used, so what is left after
// them (the candidates) is small: a few changed documents per build. Only if candidates
// remain are the other kept manifests read, and each then only has to rule candidates out
// (unusedIn), not be decoded whole.
//
// Objects go first and manifests last: if collection stops half-way the dropped manifests
// are still there and the next run deletes what is left.
//
// A manifest whose build started less than Grace ago is never dropped: it may belong to a
// builder that lost the lock while publishing and does not know it yet (CheckLock stops
// it before its pointer), and its objects are then ruled out like those of kept ones.
func (p *Publisher) collect(ctx context.Context, ptr snapshot.Pointer, cur, prev *snapshot.Manifest) (int, error) {
	p.report(Progress{Phase: PhaseCollecting})
	if err := p.checkLock(ctx); err != nil {
		return 0, err
	}
	ids, err := p.manifestIDs(ctx)
	if err != nil {
		return 0, err
	}
	kept, dropped := partition(ids, p.keep(), ptr)
	dropped, young := p.settled(dropped)
	kept = append(kept, young...)
	have := p.inMemory(cur, prev)
	others := notIn(kept, have)
	if p.Kept != nil {
		// Learnt now, when builder serve's first publication collects, even with nothing
		// to drop: otherwise the first change build that drops a snapshot pays for them.
		p.Kept.retain(kept)
		p.remember(kept, have, cur)
		if err := p.learn(ctx, others); err != nil {
			return 0, fmt.Errorf("read kept snapshots: %w", err)
		}
	}
	if len(dropped) == 0 {
		return 0, nil
	}
	cands, err := p.candidates(ctx, dropped, have, cur)
	if err != nil {
		return 0, fmt.Errorf("read old snapshots: %w", err)
	}
	for _, id := range kept {
		if m := have[id]; m != nil && len(cands) > 0 {
			ruleOutIn(cands, m)
		}
	}
	if err := p.ruleOut(ctx, cands, others); err != nil {
		return 0, fmt.Errorf("read kept snapshots: %w", err)
	}
	keys := make([]string, 0, len(cands))
	for h := range cands {
		keys = append(keys, snapshot.ObjectKey(h))
	}
	if err := p.deleteKeys(ctx, keys); err != nil {
		return 0, err
	}
	keys = keys[:0]
	for _, id := range dropped {
		keys = append(keys, snapshot.DeltaKey(id), snapshot.ManifestKey(id))
	}
	if err := p.deleteKeys(ctx, keys); err != nil {
		return 0, err
	}
	return len(dropped), nil
}

// fewCandidates is how many candidates ruleOutIn compares with each entry of a manifest
// rather than looking each entry up in the candidates' map.
const fewCandidates = 8

// ruleOutIn removes from cands every hash that m names. A change build has a handful of
// candidates and Keep manifests of 100,000 entries in memory: hashing every entry's 64
// characters to look it up in cands was a quarter of such a build's CPU, while comparing
// its first character with each candidate's rules nearly every entry out at once.
func ruleOutIn(cands map[string]bool, m *snapshot.Manifest) {
	if len(cands) > fewCandidates {
		for _, e := range m.Documents {
			delete(cands, e.Hash)
		}
		return
	}
	few := slices.Collect(maps.Keys(cands))
	for _, e := range m.Documents {
		for _, h := range few {
			// The first byte first: most entries differ there, without a call to compare.
			if len(e.Hash) == len(h) && (h == "" || e.Hash[0] == h[0]) && e.Hash == h {
				delete(cands, h)
			}
		}
	}
}

// inMemory are the manifests collection need not read: Own, the new snapshot cur and the
// one before it, prev (nil for none).
func (p *Publisher) inMemory(cur, prev *snapshot.Manifest) map[string]*snapshot.Manifest {
	have := maps.Clone(p.Own)
	if have == nil {
		have = map[string]*snapshot.Manifest{}
	}
	have[cur.ID] = cur
	if prev != nil {
		have[prev.ID] = prev
	}
	return have
}

// notIn returns the ids of kept (newest first) that have lacks, oldest first: they share
// the most objects with the dropped ones.
func notIn(kept []string, have map[string]*snapshot.Manifest) []string {
	var others []string
	for _, id := range slices.Backward(kept) {
		if have[id] == nil {
			others = append(others, id)
		}
	}
	return others
}

// settled splits the dropped manifests ids into those whose build started at least Grace
// ago, which may go, and the younger ones, which stay for now. An id that does not tell
// its time counts as old, and so does one of Own, which this process published.
func (p *Publisher) settled(ids []string) (old, young []string) {
	limit := p.now().Add(-p.grace())
	for _, id := range ids {
		if t, ok := snapshot.IDTime(id); ok && t.After(limit) && p.Own[id] == nil {
			young = append(young, id)
		} else {
			old = append(old, id)
		}
	}
	return old, young
}

// candidates returns the hashes the manifests ids name: the objects that may go. Of a
// manifest in memory, a hash that cur holds at the same route is left out at once: cur
// keeps it, and that is nearly every hash of a recent snapshot, whose 100,000 entries
// would otherwise all become candidates to rule out one by one.
func (p *Publisher) candidates(ctx context.Context, ids []string, have map[string]*snapshot.Manifest, cur *snapshot.Manifest) (map[string]bool, error) {
	cands := make(map[string]bool)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, id := range ids {
		g.Go(func() error {
			var hashes []string
			if m := have[id]; m != nil {
				for r, e := range m.Documents {
					if c, ok := cur.Documents[r]; !ok || c.Hash != e.Hash {
						hashes = append(hashes, e.Hash)
					}
				}
			} else {
				b, err := p.Store.GetMax(gctx, snapshot.ManifestKey(id), snapshot.MaxManifestSize)
				if err != nil {
					return fmt.Errorf("read manifest %s: %w", id, err)
				}
				hashes = snapshot.ScanHashes(b)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, h := range hashes {
				cands[h] = true
			}
			return nil
		})
	}
	return cands, g.Wait()
}

// ruleOut removes from cands every hash that one of the manifests ids uses. Manifests are
// read concurrently; once no candidate is left the rest are not read. With Kept, each is
// read and decoded once and its hashes remembered (KeptHashes).
func (p *Publisher) ruleOut(ctx context.Context, cands map[string]bool, ids []string) error {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, id := range ids {
		g.Go(func() error {
			mu.Lock()
			hashes := make([]string, 0, len(cands))
			for h := range cands {
				hashes = append(hashes, h)
			}
			mu.Unlock()
			if len(hashes) == 0 {
				return nil
			}
			used, err := p.usedIn(gctx, id, hashes)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, h := range used {
				delete(cands, h)
			}
			return nil
		})
	}
	return g.Wait()
}

// usedIn returns the hashes among hashes that the manifest of snapshot id uses: from Kept
// when it remembers them, else read from the store (and remembered in Kept, if any).
func (p *Publisher) usedIn(ctx context.Context, id string, hashes []string) ([]string, error) {
	if p.Kept == nil {
		b, err := p.Store.GetMax(ctx, snapshot.ManifestKey(id), snapshot.MaxManifestSize)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", id, err)
		}
		return snapshot.UsedHashes(b, id, hashes)
	}
	set, ok := p.Kept.get(id)
	if !ok {
		m, err := snapshot.ReadManifest(ctx, p.Store, id)
		if err != nil {
			return nil, err
		}
		set = p.Kept.put(m)
	}
	var used []string
	for _, h := range hashes {
		if uses(set, h) {
			used = append(used, h)
		}
	}
	return used, nil
}

// learn reads into Kept the manifests of ids it does not hold yet, concurrently.
func (p *Publisher) learn(ctx context.Context, ids []string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, id := range ids {
		if _, ok := p.Kept.get(id); ok {
			continue
		}
		g.Go(func() error {
			m, err := snapshot.ReadManifest(gctx, p.Store, id)
			if err != nil {
				return err
			}
			p.Kept.put(m)
			return nil
		})
	}
	return g.Wait()
}

// remember puts into Kept the kept manifests held in memory now that neither Own nor the
// next build will hold: the snapshot that was current before cur, read for this build. The
// next build would otherwise read and decode it from the store (0.2-0.3 s of CPU at 100,000
// documents, in builder serve's first change build). Remembering it from memory costs a
// tenth of that.
func (p *Publisher) remember(kept []string, have map[string]*snapshot.Manifest, cur *snapshot.Manifest) {
	for _, id := range kept {
		if m := have[id]; m != nil && id != cur.ID && p.Own[id] == nil {
			if _, ok := p.Kept.get(id); !ok {
				p.Kept.put(m)
			}
		}
	}
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
