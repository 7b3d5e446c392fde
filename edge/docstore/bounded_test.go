package docstore

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// boundStore is a real store that records how each document object was read: whole (Get),
// or bounded (GetMax) and at how many bytes.
type boundStore struct {
	store.Store
	mu    sync.Mutex
	reads map[string]int64 // object key -> limit of its read; -1 for a whole one
}

func (b *boundStore) note(key string, limit int64) {
	if strings.HasPrefix(key, "objects/") {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.reads[key] = limit
	}
}

func (b *boundStore) Get(ctx context.Context, key string) ([]byte, error) {
	b.note(key, -1)
	return b.Store.Get(ctx, key)
}

func (b *boundStore) GetMax(ctx context.Context, key string, limit int64) ([]byte, error) {
	b.note(key, limit)
	return b.Store.GetMax(ctx, key, limit)
}

// TestDocumentsReadBounded: the edge reads each document object through GetMax at the size
// its manifest entry gives, never whole: an object that grew (a fault, or someone with write
// access to the store) costs it at most one byte more than it expects.
func TestDocumentsReadBounded(t *testing.T) {
	st, err := store.Open(context.Background(), store.Options(testkit.NewLocalStore(t)))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{"/public/course/1": `{"id":1}`, "/public/class/2": `{"course_id":1,"cost":100}`}
	put(t, st, "snap-a", "", docs, nil)
	bs := &boundStore{Store: st, reads: map[string]int64{}}
	h := New(Options{Store: bs})
	if err := h.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, body := range docs {
		key := snapshot.ObjectKey(snapshot.Hash([]byte(body)))
		if got, ok := bs.reads[key]; !ok || got != int64(len(body)) {
			t.Errorf("read of %s: limit %d (-1: whole), read %v; want a read bounded at its %d bytes", key, got, ok, len(body))
		}
	}
}
