package docstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
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
// snapshot.
func (c *diskCache) save(ctx context.Context, s *Snapshot) error {
	have, err := c.objects(ctx)
	if err != nil {
		return err
	}
	trusted := have
	if c.suspect {
		trusted = nil
	}
	for i := range s.docs {
		d := &s.docs[i]
		if _, ok := trusted[d.hash]; !ok {
			if err := c.docs.Put(ctx, snapshot.ObjectKey(d.hexHash()), d.Body()); err != nil {
				return fmt.Errorf("cache document: %w", err)
			}
		}
	}
	if err := snapshot.WriteManifest(ctx, c.local, s.manifest()); err != nil {
		return fmt.Errorf("cache manifest: %w", err)
	}
	if err := snapshot.WritePointer(ctx, c.local, snapshot.Pointer{ID: s.id, PublishedAt: time.Now().UTC()}); err != nil {
		return fmt.Errorf("cache pointer: %w", err)
	}
	c.suspect = false
	return c.prune(ctx, s, have)
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

// prune removes the documents s does not use and the manifests of other snapshots.
func (c *diskCache) prune(ctx context.Context, s *Snapshot, have map[[sha256.Size]byte]string) error {
	used := s.index()
	var unused []string
	for hash, key := range have {
		if used[hash] == nil {
			unused = append(unused, key)
		}
	}
	if err := c.local.Delete(ctx, unused...); err != nil {
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
