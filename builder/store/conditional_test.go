package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
)

// conditional is what both stores offer the edge's poll of the pointer.
type conditional interface {
	GetIfChanged(ctx context.Context, key, tag string, limit int64) ([]byte, string, error)
}

// TestGetIfChanged: the first read returns the object and its version; asking again with
// that version returns ErrNotModified without the bytes; once the object is replaced it
// comes back with a new version, and a missing object is ErrNotFound.
func TestGetIfChanged(t *testing.T) {
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		c, ok := s.(conditional)
		if !ok {
			t.Fatalf("%T has no GetIfChanged", s)
		}
		const key = "current.json"
		if err := s.Put(ctx, key, []byte(`{"snapshot":"a"}`)); err != nil {
			t.Fatal(err)
		}
		b, tag, err := c.GetIfChanged(ctx, key, "", 1<<20)
		if err != nil || string(b) != `{"snapshot":"a"}` || tag == "" {
			t.Fatalf("GetIfChanged without a version = %q, %q, %v; want the object and its version", b, tag, err)
		}
		b, again, err := c.GetIfChanged(ctx, key, tag, 1<<20)
		if !errors.Is(err, store.ErrNotModified) || b != nil || again != tag {
			t.Errorf("GetIfChanged with the current version = %q, %q, %v; want ErrNotModified and no bytes", b, again, err)
		}
		if err := s.Put(ctx, key, []byte(`{"snapshot":"b"}`)); err != nil {
			t.Fatal(err)
		}
		b, next, err := c.GetIfChanged(ctx, key, tag, 1<<20)
		if err != nil || string(b) != `{"snapshot":"b"}` || next == tag || next == "" {
			t.Errorf("GetIfChanged after a Put = %q, %q (was %q), %v; want the new object and a new version", b, next, tag, err)
		}
		if _, _, err := c.GetIfChanged(ctx, "missing.json", "", 1<<20); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetIfChanged of a missing object: %v, want ErrNotFound", err)
		}
		if _, _, err := c.GetIfChanged(ctx, key, "", 3); !errors.Is(err, store.ErrTooLarge) {
			t.Errorf("GetIfChanged over the limit: %v, want ErrTooLarge", err)
		}
	})
}
