package publish

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
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

// upload stores objs with bounded concurrency and returns how many objects and bytes it
// wrote. The first error cancels the other uploads.
func (p *Publisher) upload(ctx context.Context, objs []object) (int, int64, error) {
	total := len(objs)
	p.report(Progress{Phase: PhaseUploading, Total: total})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.workers())
	var done atomic.Int64
	var bytes atomic.Int64
	step := max(total/200, 1) // about 200 progress reports per upload
	for _, o := range objs {
		if gctx.Err() != nil {
			break // a failed upload or a cancellation: start no more
		}
		g.Go(func() error {
			key := snapshot.ObjectKey(o.hash)
			if err := p.Store.Put(gctx, key, o.body); err != nil {
				return fmt.Errorf("store object %s: %w", key, err)
			}
			bytes.Add(int64(len(o.body)))
			if n := int(done.Add(1)); n%step == 0 || n == total {
				p.report(Progress{Phase: PhaseUploading, Done: n, Total: total})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	// The loop may have stopped on a cancellation that no upload saw.
	if err := ctx.Err(); err != nil {
		return 0, 0, fmt.Errorf("store objects: %w", err)
	}
	return int(done.Load()), bytes.Load(), nil
}
