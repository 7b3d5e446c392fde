package docstore

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// diskCache keeps a copy of the last snapshot loaded from the store in edge.cache_dir, in
// the store's own layout (objects by hash, a manifest, a pointer), so that an edge that
// starts while the store is unreachable still serves the catalogue it served before, and one
// that restarts fetches only what changed meanwhile.
//
// Document files are written without fsync: the cache is a copy, every document is checked
// against the manifest's hash when it is read back, and a cache with one bad document is not
// used. The manifest and the pointer go through store.Local, which writes them atomically.
// One edge process owns a cache_dir: two sharing one would prune each other's documents.
type diskCache struct {
	dir   string
	local *store.Local
	// suspect is set when the cache failed its check at start, so that the next save writes
	// every document again instead of trusting the files already there.
	suspect bool
}

func newDiskCache(dir string) *diskCache {
	return &diskCache{dir: dir, local: store.NewLocal(dir)}
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
	have, err := c.objects()
	if err != nil {
		return err
	}
	trusted := have
	if c.suspect {
		trusted = nil
	}
	for i := range s.docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := &s.docs[i]
		if _, ok := trusted[d.hash]; !ok {
			if err := c.writeObject(d.hexHash(), d.Body()); err != nil {
				return err
			}
		}
	}
	if err := c.writeManifest(ctx, s); err != nil {
		return err
	}
	c.suspect = false
	return c.prune(ctx, s, have)
}

// objects returns the files of the cached documents, by hash, and removes temporary files
// a killed process left behind.
func (c *diskCache) objects() (map[[sha256.Size]byte]string, error) {
	have := map[[sha256.Size]byte]string{}
	err := filepath.WalkDir(filepath.Join(c.dir, "objects"), func(path string, e fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case e.IsDir():
			return nil
		case strings.HasPrefix(e.Name(), ".tmp-"):
			return os.Remove(path)
		}
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			if hash, ok := parseHash(name); ok {
				have[hash] = path
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list cached documents: %w", err)
	}
	return have, nil
}

// writeObject writes one document through a temporary file and a rename, so that a
// killed process never leaves a partial file under a document's name.
func (c *diskCache) writeObject(hash string, body []byte) error {
	name := filepath.Join(c.dir, filepath.FromSlash(snapshot.ObjectKey(hash)))
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cache document %s: %w", hash, err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("cache document %s: %w", hash, err)
	}
	_, err = tmp.Write(body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("cache document %s: %w", hash, err)
	}
	return nil
}

// writeManifest writes the manifest of s, then the pointer to it.
func (c *diskCache) writeManifest(ctx context.Context, s *Snapshot) error {
	m, err := json.Marshal(s.manifest())
	if err != nil {
		return fmt.Errorf("encode manifest %s: %w", s.id, err)
	}
	if err := c.local.Put(ctx, snapshot.ManifestKey(s.id), m); err != nil {
		return fmt.Errorf("cache manifest: %w", err)
	}
	p, err := json.Marshal(snapshot.Pointer{ID: s.id, PublishedAt: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("encode pointer %s: %w", s.id, err)
	}
	if err := c.local.Put(ctx, snapshot.PointerKey, p); err != nil {
		return fmt.Errorf("cache pointer: %w", err)
	}
	return nil
}

// prune removes the documents s does not use and the manifests of other snapshots.
func (c *diskCache) prune(ctx context.Context, s *Snapshot, have map[[sha256.Size]byte]string) error {
	used := s.index()
	for hash, path := range have {
		if used[hash] == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("prune cached document %x: %w", hash, err)
			}
		}
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
