package publish

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// object is one document object to store.
type object struct {
	hash string
	body []byte
}

// known returns the hashes of the objects the current snapshot uses: they are in the store
// and stay there while that snapshot is kept, which it is through this publication.
func known(cur *snapshot.Manifest) map[string]bool {
	if cur == nil {
		return nil
	}
	k := make(map[string]bool, len(cur.Documents))
	for _, e := range cur.Documents {
		k[e.Hash] = true
	}
	return k
}

// plan hashes every document into m.Documents and returns the objects that are not stored
// yet, each once even when several routes share its content.
func plan(docs map[string][]byte, m *snapshot.Manifest, stored map[string]bool) []object {
	routes := make([]string, 0, len(docs))
	for r := range docs {
		routes = append(routes, r)
	}
	hashes := hashAll(routes, docs)
	var todo []object
	queued := make(map[string]bool)
	for i, r := range routes {
		h, body := hashes[i], docs[r]
		m.Documents[r] = snapshot.Entry{Hash: h, Size: int64(len(body))}
		if !stored[h] && !queued[h] {
			queued[h] = true
			todo = append(todo, object{hash: h, body: body})
		}
	}
	return todo
}

// hashAll hashes the documents of routes on every core: at 100,000 documents hashing is a
// noticeable part of a build that changed nothing.
func hashAll(routes []string, docs map[string][]byte) []string {
	hashes := make([]string, len(routes))
	n := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for i := w; i < len(routes); i += n {
				hashes[i] = snapshot.Hash(docs[routes[i]])
			}
		})
	}
	wg.Wait()
	return hashes
}

// Batched uploads, for stores that take many objects in one request (store.Batcher):
// an upload of at least minBatched objects goes in batches of up to batchObjects objects or
// batchBytes bytes, batchWorkers at a time. Smaller uploads (a build that changed a few
// documents) keep one request per object, which has the least latency.
const (
	minBatched   = 256
	batchObjects = 1000
	batchBytes   = 8 << 20
	batchWorkers = 8
)

// upload stores objs with bounded concurrency and returns how many objects and bytes it
// wrote. The first error cancels the other uploads.
func (p *Publisher) upload(ctx context.Context, objs []object) (int, int64, error) {
	u := &uploader{p: p, total: len(objs), step: max(len(objs)/200, 1)} // ~200 progress reports
	p.report(Progress{Phase: PhaseUploading, Total: u.total})
	rest := objs
	if b, ok := p.Store.(store.Batcher); ok && len(objs) >= minBatched {
		var err error
		if rest, err = u.batches(ctx, b, objs); err != nil {
			return 0, 0, err
		}
	}
	if err := u.singles(ctx, rest); err != nil {
		return 0, 0, err
	}
	// The workers may have stopped on a cancellation that no upload saw.
	if err := ctx.Err(); err != nil {
		return 0, 0, fmt.Errorf("store objects: %w", err)
	}
	return int(u.done.Load()), u.bytes.Load(), nil
}

// uploader counts what an upload stored and reports its progress.
type uploader struct {
	p     *Publisher
	total int
	step  int
	done  atomic.Int64
	bytes atomic.Int64
}

// stored counts objs as stored.
func (u *uploader) stored(objs ...object) {
	for _, o := range objs {
		u.bytes.Add(int64(len(o.body)))
	}
	n := int(u.done.Add(int64(len(objs))))
	if before := n - len(objs); n/u.step != before/u.step || n == u.total {
		u.p.report(Progress{Phase: PhaseUploading, Done: n, Total: u.total})
	}
}

// singles stores objs one request each. Its workers live for the whole upload, so the
// deep stack of an SDK request is grown once per worker rather than once per object.
func (u *uploader) singles(ctx context.Context, objs []object) error {
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(u.p.workers(), len(objs)) {
		g.Go(func() error {
			for gctx.Err() == nil { // a failed upload or a cancellation: start no more
				i := int(next.Add(1)) - 1
				if i >= len(objs) {
					return nil
				}
				key := snapshot.ObjectKey(objs[i].hash)
				if err := u.p.Store.Put(gctx, key, objs[i].body); err != nil {
					return fmt.Errorf("store object %s: %w", key, err)
				}
				u.stored(objs[i])
			}
			return nil
		})
	}
	return g.Wait()
}

// batches stores objs in batches through b and returns what is left to store one by one:
// nothing, or every object when the store turned out not to take batches. The first batch
// goes alone, because it is the one that finds that out.
func (u *uploader) batches(ctx context.Context, b store.Batcher, objs []object) ([]object, error) {
	chunks := chunk(objs)
	if len(chunks) == 0 {
		return nil, nil
	}
	if err := u.batch(ctx, b, chunks[0]); errors.Is(err, store.ErrBatchUnsupported) {
		return objs, nil
	} else if err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(batchWorkers)
	for _, c := range chunks[1:] {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return u.batch(gctx, b, c) })
	}
	return nil, g.Wait()
}

// batch stores one batch.
func (u *uploader) batch(ctx context.Context, b store.Batcher, objs []object) error {
	batch := make([]store.Object, len(objs))
	for i, o := range objs {
		batch[i] = store.Object{Key: snapshot.ObjectKey(o.hash), Body: o.body}
	}
	if err := b.PutBatch(ctx, batch); err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	u.stored(objs...)
	return nil
}

// chunk splits objs into batches of at most batchObjects objects and, past each batch's
// first object, batchBytes bytes.
func chunk(objs []object) [][]object {
	if len(objs) == 0 {
		return nil
	}
	var chunks [][]object
	start, size := 0, 0
	for i, o := range objs {
		if i > start && (i-start == batchObjects || size+len(o.body) > batchBytes) {
			chunks = append(chunks, objs[start:i])
			start, size = i, 0
		}
		size += len(o.body)
	}
	return append(chunks, objs[start:])
}
