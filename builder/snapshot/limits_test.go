package snapshot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// TestReadsAreBounded: the pointer and a manifest larger than their caps, and a document
// larger than its manifest entry says, are refused with store.ErrTooLarge before they are
// read (the objects here are sparse files: nothing is read or allocated).
func TestReadsAreBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := store.NewLocal(dir)
	sparse := func(key string, size int64) {
		t.Helper()
		name := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(name, size); err != nil {
			t.Fatal(err)
		}
	}
	sparse(snapshot.PointerKey, snapshot.MaxPointerSize+1)
	if _, err := snapshot.ReadPointer(ctx, s); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("ReadPointer(%d bytes) = %v; want ErrTooLarge", snapshot.MaxPointerSize+1, err)
	}
	const id = "20270301T090000.000Z-0123abcd"
	sparse(snapshot.ManifestKey(id), snapshot.MaxManifestSize+1)
	if _, err := snapshot.ReadManifest(ctx, s, id); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("ReadManifest(%d bytes) = %v; want ErrTooLarge", snapshot.MaxManifestSize+1, err)
	}

	body := []byte(`{"id":1}`)
	e := snapshot.Entry{Hash: snapshot.Hash(body), Size: int64(len(body))}
	sparse(snapshot.ObjectKey(e.Hash), 1<<30) // an object that grew to 1 GiB
	if _, err := snapshot.ReadDocument(ctx, s, e); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("ReadDocument(1 GiB, entry of %d bytes) = %v; want ErrTooLarge", e.Size, err)
	}
	for _, size := range []int64{-1, snapshot.MaxDocumentSize + 1} {
		if _, err := snapshot.ReadDocument(ctx, s, snapshot.Entry{Hash: e.Hash, Size: size}); err == nil || !strings.Contains(err.Error(), "size") {
			t.Errorf("ReadDocument(entry of %d bytes) = %v; want an error about its size", size, err)
		}
	}
}
