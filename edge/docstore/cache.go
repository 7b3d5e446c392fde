package docstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// diskCache keeps a copy of the last snapshot loaded from the store in edge.cache_dir, a
// local store (store.Local) written in the published format (builder/snapshot), so that an
// edge that starts while the store is unreachable still serves the catalogue it served
// before, and one that restarts fetches only what changed meanwhile.
//
// Documents are written without fsync (store.Local.Unsynced): the cache is a copy, every
// document is checked against the manifest's hash when it is read back, and a cache with
// one bad document is not used. The manifest and the pointer are synced. One edge process
// owns a cache_dir: two sharing one would prune each other's documents.
type diskCache struct {
	dir   string
	local *store.Local // the manifest and the pointer
	docs  *store.Local // the same folder, for the documents: unsynced
	// suspect is set when the cache failed its check at start, so that the next save writes
	// every document again instead of trusting the files already there.
	suspect bool
	// saved is the id of the snapshot the cache holds exactly, as the last save left it:
	// its documents, no others, and its manifest; "" when unknown (at start, after a
	// failed save).
	saved string
}

func newDiskCache(dir string) *diskCache {
	local := store.NewLocal(dir)
	return &diskCache{dir: dir, local: local, docs: local.Unsynced()}
}

// load reads and checks the cached snapshot; it returns nil, nil when there is none.
func (c *diskCache) load(ctx context.Context) (*Snapshot, error) {
	m, err := snapshot.ReadCurrent(ctx, c.local)
	if errors.Is(err, snapshot.ErrNoSnapshot) {
		return nil, nil
	}
	if err == nil {
		var s *Snapshot
		if s, err = loadSnapshot(ctx, c.local, m, nil); err == nil {
			return s, nil
		}
	}
	c.suspect = true
	return nil, fmt.Errorf("load cache %s: %w", c.dir, err)
}

// save writes the documents of s that the cache lacks, then its manifest, then the pointer,
// and last removes what s no longer uses, so that the cache always names a complete
// snapshot. When the cache holds prev and s differs from it only at the routes touched (a
// snapshot loaded from its delta over prev), only those routes' documents are written and
// removed; otherwise the cache's files are listed and compared with s.
func (c *diskCache) save(ctx context.Context, s, prev *Snapshot, touched []string) error {
	delta := touched != nil && prev != nil && c.saved == prev.id && !c.suspect
	c.saved = "" // until this save has finished
	var gone map[[sha256.Size]byte]string
	var err error
	if delta {
		gone, err = c.writeChanged(ctx, s, prev, touched)
	} else {
		gone, err = c.writeAll(ctx, s)
	}
	if err != nil {
		return err
	}
	if err := snapshot.WriteManifest(ctx, c.local, s.manifest()); err != nil {
		return fmt.Errorf("cache manifest: %w", err)
	}
	if err := snapshot.WritePointer(ctx, c.local, snapshot.Pointer{ID: s.id, PublishedAt: time.Now().UTC()}); err != nil {
		return fmt.Errorf("cache pointer: %w", err)
	}
	c.suspect = false
	if err := c.prune(ctx, s, gone, delta); err != nil {
		return err
	}
	c.saved = s.id
	return nil
}

// writeAll writes the documents of s that the cache lacks, or every one when it is
// suspect, and returns the cached documents s does not use.
func (c *diskCache) writeAll(ctx context.Context, s *Snapshot) (map[[sha256.Size]byte]string, error) {
	have, err := c.objects(ctx)
	if err != nil {
		return nil, err
	}
	trusted := have
	if c.suspect {
		trusted = nil
	}
	var werr error
	written := map[[sha256.Size]byte]bool{} // once however many routes share a document
	s.eachDoc(func(d *Document) {
		if _, ok := trusted[d.hash]; ok || written[d.hash] || werr != nil {
			return
		}
		werr = c.put(ctx, d)
		written[d.hash] = true
	})
	if werr != nil {
		return nil, werr
	}
	s.eachDoc(func(d *Document) { delete(have, d.hash) })
	return have, nil
}

// writeChanged writes the documents of the routes touched whose content differs from
// prev's, which the cache holds, and returns prev's documents there that s may not use
// any more (prune checks that no other route of s does).
func (c *diskCache) writeChanged(ctx context.Context, s, prev *Snapshot, touched []string) (map[[sha256.Size]byte]string, error) {
	gone := map[[sha256.Size]byte]string{}
	for _, r := range touched {
		old, now := prev.lookup(r), s.lookup(r)
		if old != nil && now != nil && old.hash == now.hash {
			continue
		}
		if old != nil {
			gone[old.hash] = snapshot.ObjectKey(old.hexHash())
		}
		if now != nil {
			// It may be cached for another route already: writing it again is harmless.
			if err := c.put(ctx, now); err != nil {
				return nil, err
			}
		}
	}
	return gone, nil
}

func (c *diskCache) put(ctx context.Context, d *Document) error {
	if err := c.docs.Put(ctx, snapshot.ObjectKey(d.hexHash()), d.Body()); err != nil {
		return fmt.Errorf("cache document: %w", err)
	}
	return nil
}

// objects returns the keys of the cached documents, by hash, and removes temporary files
// a killed process left behind.
func (c *diskCache) objects(ctx context.Context) (map[[sha256.Size]byte]string, error) {
	if err := c.local.RemoveTemp(ctx, snapshot.ObjectPrefix); err != nil {
		return nil, fmt.Errorf("list cached documents: %w", err)
	}
	keys, err := c.local.List(ctx, snapshot.ObjectPrefix)
	if err != nil {
		return nil, fmt.Errorf("list cached documents: %w", err)
	}
	have := map[[sha256.Size]byte]string{}
	for _, k := range keys {
		if hash, ok := parseHash(snapshot.HashFromObjectKey(k)); ok {
			have[hash] = k
		}
	}
	return have, nil
}

// prune removes the documents of unused that s does not use (all of them but those
// another of s's routes uses, when check is set) and the manifests of other snapshots.
func (c *diskCache) prune(ctx context.Context, s *Snapshot, unused map[[sha256.Size]byte]string, check bool) error {
	if check && len(unused) > 0 {
		// A change build's old document may be another route's still: classes can have
		// the same document. One look at every hash, no allocation.
		s.eachDoc(func(d *Document) { delete(unused, d.hash) })
	}
	if err := c.local.Delete(ctx, slices.Collect(maps.Values(unused))...); err != nil {
		return fmt.Errorf("prune cached documents: %w", err)
	}
	keys, err := c.local.List(ctx, snapshot.ManifestPrefix)
	if err != nil {
		return fmt.Errorf("list cached manifests: %w", err)
	}
	for _, k := range keys {
		if k != snapshot.ManifestKey(s.id) {
			if err := c.local.Delete(ctx, k); err != nil {
				return fmt.Errorf("prune cached manifest: %w", err)
			}
		}
	}
	return nil
}
