package store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/trainingco/catalogue/builder/store"
)

// newLocal returns a fresh, ensured local store and its root folder.
func newLocal(t *testing.T) (*store.Local, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "catalogue")
	s := store.NewLocal(root)
	if err := s.Ensure(context.Background()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return s, root
}

// files returns every file under root with its permission bits, keyed by slash path.
func files(t *testing.T, root string) map[string]fs.FileMode {
	t.Helper()
	got := map[string]fs.FileMode{}
	err := filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, name)
		got[filepath.ToSlash(rel)] = info.Mode().Perm()
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return got
}

func TestLocalKeysStayInsideRoot(t *testing.T) {
	s, root := newLocal(t)
	ctx := context.Background()
	for _, key := range []string{"../escape.json", "objects/../../escape.json", "/tmp/escape.json", "..", "../.."} {
		if err := s.Put(ctx, key, []byte("x")); err == nil {
			t.Errorf("Put(%q) succeeded; want an error", key)
		}
		if err := s.Delete(ctx, key); err == nil {
			t.Errorf("Delete(%q) succeeded; want an error", key)
		}
	}
	// The root's parent is this test's own temporary folder: it holds the root and nothing else.
	entries, err := os.ReadDir(filepath.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff([]string{"catalogue"}, got); diff != "" {
		t.Errorf("entries of %s mismatch (-want +got):\n%s", filepath.Dir(root), diff)
	}
	if diff := cmp.Diff(map[string]fs.FileMode{}, files(t, root)); diff != "" {
		t.Errorf("files under the root mismatch (-want +got):\n%s", diff)
	}
}

// TestLocalPutLeavesOnlyObjects: Put leaves no temporary file behind, and objects are readable
// by everyone (CreateTemp makes files 0600).
func TestLocalPutLeavesOnlyObjects(t *testing.T) {
	s, root := newLocal(t)
	ctx := context.Background()
	for _, body := range []string{"one", "two", "three"} {
		for _, key := range []string{"current.json", "objects/ab/ab01.json"} {
			if err := s.Put(ctx, key, []byte(body)); err != nil {
				t.Fatalf("Put(%q): %v", key, err)
			}
		}
	}
	want := map[string]fs.FileMode{"current.json": 0o644, "objects/ab/ab01.json": 0o644}
	if diff := cmp.Diff(want, files(t, root)); diff != "" {
		t.Errorf("files under the root mismatch (-want +got):\n%s", diff)
	}
}

// TestLocalIgnoresLeftoverTempFiles: a process killed during Put leaves its temporary file
// and the old object; List must not report the temporary file and Get still returns the
// old object.
func TestLocalIgnoresLeftoverTempFiles(t *testing.T) {
	s, root := newLocal(t)
	ctx := context.Background()
	if err := s.Put(ctx, "objects/ab/ab01.json", []byte("old")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	for _, name := range []string{"objects/ab/.tmp-123456", ".tmp-987654"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte("new, cut sh"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string{"objects/ab/ab01.json"}, got); diff != "" {
		t.Errorf("List(%q) mismatch (-want +got):\n%s", "", diff)
	}
	b, err := s.Get(ctx, "objects/ab/ab01.json")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if diff := cmp.Diff("old", string(b)); diff != "" {
		t.Errorf("Get(%q) mismatch (-want +got):\n%s", "objects/ab/ab01.json", diff)
	}
}

// TestLocalRemoveTemp: RemoveTemp removes the temporary files under its prefix and nothing
// else: objects, and temporary files under other prefixes, stay.
func TestLocalRemoveTemp(t *testing.T) {
	s, root := newLocal(t)
	ctx := context.Background()
	for _, key := range []string{"objects/ab/ab01.json", "current.json"} {
		if err := s.Put(ctx, key, []byte("x")); err != nil {
			t.Fatalf("Put: %v", err)
		}
	}
	for _, name := range []string{"objects/ab/.tmp-123456", "objects/.tmp-1", ".tmp-987654"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte("cut sh"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveTemp(ctx, "objects/"); err != nil {
		t.Fatalf("RemoveTemp: %v", err)
	}
	want := map[string]fs.FileMode{"objects/ab/ab01.json": 0o644, "current.json": 0o644, ".tmp-987654": 0o600}
	if diff := cmp.Diff(want, files(t, root)); diff != "" {
		t.Errorf("files after RemoveTemp(objects/) mismatch (-want +got):\n%s", diff)
	}
}

// TestLocalUnsynced: a Put through Unsynced writes the same objects, on the same folder,
// as a synced one.
func TestLocalUnsynced(t *testing.T) {
	s, root := newLocal(t)
	ctx := context.Background()
	if err := s.Unsynced().Put(ctx, "objects/ab/ab01.json", []byte("unsynced")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	b, err := s.Get(ctx, "objects/ab/ab01.json")
	if err != nil || string(b) != "unsynced" {
		t.Errorf("Get after an unsynced Put = %q, %v; want %q", b, err, "unsynced")
	}
	if diff := cmp.Diff(map[string]fs.FileMode{"objects/ab/ab01.json": 0o644}, files(t, root)); diff != "" {
		t.Errorf("files under the root mismatch (-want +got):\n%s", diff)
	}
}

// TestLocalMissingRoot: a store whose folder does not exist yet is empty, not broken, so
// the edge can start before the first build.
func TestLocalMissingRoot(t *testing.T) {
	s := store.NewLocal(filepath.Join(t.TempDir(), "never", "created"))
	ctx := context.Background()
	got, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string(nil), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("List(%q) mismatch (-want +got):\n%s", "", diff)
	}
	if _, err := s.Get(ctx, "current.json"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(%q) = %v; want ErrNotFound", "current.json", err)
	}
}
