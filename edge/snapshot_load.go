package edge

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// fetchParallel bounds the documents fetched at once: enough to hide the store's latency,
// few enough not to flood it or hold many bodies and compressors in flight.
const fetchParallel = 32

// getTimeout bounds one read from the store, so that a connection that hangs cannot stall
// the loader for ever; the whole load has no deadline, since a first load of a large
// catalogue legitimately takes a while.
const getTimeout = time.Minute

// timeoutGetter gives every Get its own deadline.
type timeoutGetter struct{ snapshot.Getter }

func (g timeoutGetter) Get(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, getTimeout)
	defer cancel()
	return g.Getter.Get(ctx, key)
}

// loadSnapshot builds the in-memory snapshot of m. A document whose hash one of the reuse
// indexes already holds is taken from there; only the others are read from g, at most
// fetchParallel at a time, each checked against its hash and compressed once. fetched
// receives every document read, when it is not nil, also when the load fails, so that a
// retry need not read them again. Any failure fails the whole load: a partial snapshot is
// never returned.
func loadSnapshot(ctx context.Context, g snapshot.Getter, m *snapshot.Manifest, fetched map[string]*document, reuse ...map[string]*document) (*memSnapshot, error) {
	if err := checkManifest(m); err != nil {
		return nil, err
	}
	docs, missing := plan(m, reuse)
	got := make([]*document, len(missing))
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(fetchParallel)
	for i, e := range missing {
		eg.Go(func() error {
			b, err := snapshot.ReadDocument(ectx, g, e)
			if err != nil {
				return err
			}
			got[i], err = newDocument(e.Hash, b)
			return err
		})
	}
	err := eg.Wait()
	for i, e := range missing {
		if got[i] != nil && fetched != nil {
			fetched[e.Hash] = got[i]
		}
		docs[e.Hash] = got[i]
	}
	if err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", m.ID, err)
	}
	return newMemSnapshot(m, docs)
}

// plan sorts the documents of m into those already in memory and those to fetch, each hash
// once however many routes share it.
func plan(m *snapshot.Manifest, reuse []map[string]*document) (docs map[string]*document, missing []snapshot.Entry) {
	docs = make(map[string]*document, len(m.Documents))
	for _, e := range m.Documents {
		if _, seen := docs[e.Hash]; seen {
			continue
		}
		docs[e.Hash] = lookup(reuse, e.Hash)
		if docs[e.Hash] == nil {
			missing = append(missing, e)
		}
	}
	return docs, missing
}

func lookup(indexes []map[string]*document, hash string) *document {
	for _, idx := range indexes {
		if d := idx[hash]; d != nil {
			return d
		}
	}
	return nil
}
