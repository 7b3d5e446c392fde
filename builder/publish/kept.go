package publish

import (
	"bytes"
	"encoding/hex"
	"slices"
	"sync"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// KeptHashes remembers the object hashes of the kept manifests collection read from the
// store, by snapshot id, so that a long-running builder reads and decodes each of them
// once rather than at every publication. Without it, builder serve started over a store
// holding snapshots it did not publish read up to builder.keep manifests of ~11 MB at
// every change it published until its own had replaced them: 3 to 8 s of CPU for a build
// of ten documents at 100,000 classes (make bench's COMMIT to the classes feed).
//
// A hash is kept as its first 16 bytes, 1.3 MB for 83,000 documents instead of ~7 MB as
// strings: two hashes sharing those bytes would only keep an object that could have gone.
// Safe for concurrent use; the zero value is ready.
type KeptHashes struct {
	mu   sync.Mutex
	sets map[string][]hashPrefix // sorted
}

type hashPrefix [16]byte

func (a hashPrefix) compare(b hashPrefix) int { return bytes.Compare(a[:], b[:]) }

// prefixOf is the first 16 bytes of a hex hash; ok is false for one that is not hex.
func prefixOf(h string) (p hashPrefix, ok bool) {
	if len(h) < 2*len(p) {
		return p, false
	}
	_, err := hex.Decode(p[:], []byte(h[:2*len(p)]))
	return p, err == nil
}

// get returns the hashes of manifest id, if remembered.
func (k *KeptHashes) get(id string) ([]hashPrefix, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.sets[id]
	return s, ok
}

// put remembers the hashes m names, and returns them as get would.
func (k *KeptHashes) put(m *snapshot.Manifest) []hashPrefix {
	set := make([]hashPrefix, 0, len(m.Documents))
	for _, e := range m.Documents {
		if p, ok := prefixOf(e.Hash); ok {
			set = append(set, p)
		}
	}
	slices.SortFunc(set, hashPrefix.compare)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sets == nil {
		k.sets = map[string][]hashPrefix{}
	}
	k.sets[m.ID] = set
	return set
}

// retain forgets the manifests not in ids: those no longer kept.
func (k *KeptHashes) retain(ids []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id := range k.sets {
		if !slices.Contains(ids, id) {
			delete(k.sets, id)
		}
	}
}

// uses reports whether set (of get) may hold hash h: a hash that is not hex may be
// anything, so it is taken as used.
func uses(set []hashPrefix, h string) bool {
	p, ok := prefixOf(h)
	if !ok {
		return true
	}
	_, found := slices.BinarySearchFunc(set, p, hashPrefix.compare)
	return found
}
