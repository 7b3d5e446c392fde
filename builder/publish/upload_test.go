package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

func TestChunk(t *testing.T) {
	const mib = 1 << 20
	objs := func(n, size int) []object {
		o := make([]object, n)
		for i := range o {
			o[i].body = make([]byte, size)
		}
		return o
	}
	tests := []struct {
		name string
		objs []object
		want []int // objects per batch
	}{
		{"none", nil, nil},
		{"one", objs(1, 10), []int{1}},
		{"exactly one batch", objs(1000, 10), []int{1000}},
		{"by count", objs(2500, 10), []int{1000, 1000, 500}},
		{"by bytes", objs(5, 3*mib), []int{2, 2, 1}},
		{"exactly the byte limit", objs(3, 4*mib), []int{2, 1}},
		{"an object above the byte limit goes alone", objs(2, 9*mib), []int{1, 1}},
	}
	for _, tt := range tests {
		var got []int
		for _, c := range chunk(tt.objs) {
			got = append(got, len(c))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("chunk(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// manyDocs returns n documents with distinct bodies.
func manyDocs(n int) map[string][]byte {
	docs := make(map[string][]byte, n)
	for i := range n {
		docs[fmt.Sprintf("class/%d", i+1)] = fmt.Appendf(nil, `{"id":%d,"name":"class %d"}`, i+1, i+1)
	}
	return docs
}

// openStores returns a fresh local folder and a fresh MinIO bucket, unwrapped: the S3 store
// takes batches, the local one does not.
func openStores(t *testing.T) map[string]store.Store {
	t.Helper()
	stores := map[string]store.Store{}
	for name, cfg := range testkit.Stores(t) {
		s, err := store.Open(context.Background(), store.Options(cfg))
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		if err := s.Ensure(context.Background()); err != nil {
			t.Fatalf("ensure store: %v", err)
		}
		stores[name] = s
	}
	return stores
}

// TestPublishManyObjects: an upload large enough to go in batches (on MinIO) stores every
// object, counts them and their bytes, reports the upload complete, and leaves nothing in
// the store but objects, manifests and the pointer.
func TestPublishManyObjects(t *testing.T) {
	const n = 2345 // three batches on MinIO
	for name, s := range openStores(t) {
		t.Run(name, func(t *testing.T) {
			docs := manyDocs(n)
			var wantBytes int64
			for _, b := range docs {
				wantBytes += int64(len(b))
			}
			p := newPublisher(s, 10)
			var mu sync.Mutex
			complete := false
			p.Progress = func(pr Progress) {
				mu.Lock()
				defer mu.Unlock()
				complete = complete || (pr.Phase == PhaseUploading && pr.Done == n && pr.Total == n)
			}
			res := mustPublish(t, p, docs)
			if res.ObjectsStored != n || res.BytesStored != wantBytes {
				t.Errorf("Publish stored %d objects, %d bytes; want %d, %d", res.ObjectsStored, res.BytesStored, n, wantBytes)
			}
			if !complete {
				t.Errorf("Progress never reported %d of %d objects stored", n, n)
			}
			assertServable(t, &recorder{Store: s}, docs)
			for _, k := range listKeys(t, s, "") {
				if !strings.HasPrefix(k, "objects/") && !strings.HasPrefix(k, "snapshots/") && k != snapshot.PointerKey {
					t.Errorf("store holds %q; want only objects, manifests and the pointer", k)
				}
			}
		})
	}
}

// batcher wraps a real store as a Batcher whose PutBatch stores each object with Put, or
// fails as its func field says.
type batcher struct {
	store.Store
	mu    sync.Mutex
	calls int
	fail  func(call int) error // nil: every batch goes through
}

func (b *batcher) PutBatch(ctx context.Context, objs []store.Object) error {
	b.mu.Lock()
	b.calls++
	call := b.calls
	b.mu.Unlock()
	if b.fail != nil {
		if err := b.fail(call); err != nil {
			return err
		}
	}
	for _, o := range objs {
		if err := b.Store.Put(ctx, o.Key, o.Body); err != nil {
			return err
		}
	}
	return nil
}

// TestPublishWithoutBatches: a store that turns out not to take batches gets every object
// one by one, after a single refused batch.
func TestPublishWithoutBatches(t *testing.T) {
	s := &batcher{Store: openStores(t)["local"], fail: func(int) error { return store.ErrBatchUnsupported }}
	docs := manyDocs(300)
	res := mustPublish(t, newPublisher(s, 10), docs)
	if res.ObjectsStored != 300 {
		t.Errorf("Publish stored %d objects; want 300", res.ObjectsStored)
	}
	if s.calls != 1 {
		t.Errorf("PutBatch called %d times; want 1 (the refused first batch)", s.calls)
	}
	assertServable(t, &recorder{Store: s}, docs)
}

// TestPublishBatchFailurePublishesNothing: a failed batch fails the publication before the
// manifest and pointer are written; the store has no current snapshot.
func TestPublishBatchFailurePublishesNothing(t *testing.T) {
	s := &batcher{Store: openStores(t)["local"], fail: func(call int) error {
		if call == 2 {
			return errInjected
		}
		return nil
	}}
	_, err := newPublisher(s, 10).Publish(context.Background(), manyDocs(2500), meta(1, 1), false)
	if !errors.Is(err, errInjected) {
		t.Fatalf("Publish = %v; want the injected failure", err)
	}
	if keys := listKeys(t, s, "snapshots/"); len(keys) != 0 {
		t.Errorf("manifests after a failed upload: %q; want none", keys)
	}
	if _, err := snapshot.ReadPointer(context.Background(), s); !errors.Is(err, snapshot.ErrNoSnapshot) {
		t.Errorf("ReadPointer after a failed upload = %v; want ErrNoSnapshot", err)
	}
}
