package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// kinds are the two implementations every test of the shared suite runs against: a fresh
// folder, and a fresh bucket on the test MinIO.
var kinds = []struct {
	name string
	cfg  func(testing.TB) config.Store
}{
	{"local", testkit.NewLocalStore},
	{"s3", newS3Store},
}

// eachStore runs f once per kind, in parallel subtests, with a store opened through
// store.Open on a fresh location. When ensure is set, Ensure has been called.
func eachStore(t *testing.T, ensure bool, f func(t *testing.T, ctx context.Context, cfg config.Store, s store.Store)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			cfg := k.cfg(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			t.Cleanup(cancel)
			s, err := store.Open(ctx, store.Options(cfg))
			if err != nil {
				t.Fatalf("Open(%q): %v", cfg.URL, err)
			}
			if ensure {
				if err := s.Ensure(ctx); err != nil {
					t.Fatalf("Ensure: %v", err)
				}
			}
			f(t, ctx, cfg, s)
		})
	}
}

// putAll stores every key with its body, 32 at a time.
func putAll(t *testing.T, ctx context.Context, s store.Store, objects map[string]string) {
	t.Helper()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for key, body := range objects {
		g.Go(func() error { return s.Put(gctx, key, []byte(body)) })
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func mustGet(t *testing.T, ctx context.Context, s store.Store, key string) string {
	t.Helper()
	b, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return string(b)
}

func TestRoundTrip(t *testing.T) {
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	tests := []struct{ key, body string }{
		{"current.json", `{"snapshot":"20260301T101500Z"}`},
		{"objects/ab/abcdef.json", `{"data":[1,2,3]}`},
		{"snapshots/20260301T101500Z.json", "{}"},
		{"empty", ""},
		{"binary.bin", string(binary)},
		{"names/with space/é+ü.json", `"unicode and spaces in keys"`},
	}
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		for _, tt := range tests {
			if err := s.Put(ctx, tt.key, []byte(tt.body)); err != nil {
				t.Fatalf("Put(%q): %v", tt.key, err)
			}
		}
		for _, tt := range tests {
			if diff := cmp.Diff(tt.body, mustGet(t, ctx, s, tt.key)); diff != "" {
				t.Errorf("Get(%q) mismatch (-want +got):\n%s", tt.key, diff)
			}
		}
	})
}

func TestOverwrite(t *testing.T) {
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		// The second body is shorter, so a Put that does not truncate leaves a tail behind.
		for _, body := range []string{`{"snapshot":"first-and-longer"}`, `{"snapshot":"2"}`} {
			if err := s.Put(ctx, "current.json", []byte(body)); err != nil {
				t.Fatalf("Put: %v", err)
			}
		}
		if diff := cmp.Diff(`{"snapshot":"2"}`, mustGet(t, ctx, s, "current.json")); diff != "" {
			t.Errorf("Get(%q) mismatch (-want +got):\n%s", "current.json", diff)
		}
	})
}

func TestGetMissing(t *testing.T) {
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		if err := s.Put(ctx, "objects/ab/ab01.json", []byte("{}")); err != nil {
			t.Fatalf("Put: %v", err)
		}
		for _, key := range []string{
			"current.json",              // never written
			"objects/ab/ab02.json",      // its folder exists
			"objects/zz/zz01.json",      // its folder does not
			"objects/ab/ab01.json/more", // below an object
			"objects",                   // a folder of the local store, not an object
		} {
			got, err := s.Get(ctx, key)
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(%q) = %q, %v; want an error wrapping ErrNotFound", key, got, err)
			}
		}
	})
}

func TestList(t *testing.T) {
	objects := map[string]string{
		"current.json":         "{}",
		"objects/ab/ab01.json": "1",
		"objects/ab/ab02.json": "2",
		"objects/ac/ac01.json": "3",
		"objects-old.json":     "4",
		"snapshots/s1.json":    "5",
		"snapshots/s2.json":    "6",
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		// '-' sorts before '/', so objects-old.json comes before the objects/ folder.
		{"", []string{"current.json", "objects-old.json", "objects/ab/ab01.json", "objects/ab/ab02.json",
			"objects/ac/ac01.json", "snapshots/s1.json", "snapshots/s2.json"}},
		{"objects", []string{"objects-old.json", "objects/ab/ab01.json", "objects/ab/ab02.json", "objects/ac/ac01.json"}},
		{"objects/", []string{"objects/ab/ab01.json", "objects/ab/ab02.json", "objects/ac/ac01.json"}},
		{"objects/a", []string{"objects/ab/ab01.json", "objects/ab/ab02.json", "objects/ac/ac01.json"}},
		{"objects/ab/", []string{"objects/ab/ab01.json", "objects/ab/ab02.json"}},
		{"objects/ab/ab02", []string{"objects/ab/ab02.json"}},
		{"snapshots/s", []string{"snapshots/s1.json", "snapshots/s2.json"}},
		{"current.json", []string{"current.json"}},
		{"current.json/", nil},
		{"nothing", nil},
		{"nothing/", nil},
		{"../", nil},
	}
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		putAll(t, ctx, s, objects)
		for _, tt := range tests {
			got, err := s.List(ctx, tt.prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", tt.prefix, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("List(%q) mismatch (-want +got):\n%s", tt.prefix, diff)
			}
		}
	})
}

func TestListFreshStore(t *testing.T) {
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		got, err := s.List(ctx, "")
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if diff := cmp.Diff([]string(nil), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("List(%q) mismatch (-want +got):\n%s", "", diff)
		}
	})
}

func TestDelete(t *testing.T) {
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		putAll(t, ctx, s, map[string]string{"objects/1.json": "1", "objects/2.json": "2", "objects/3.json": "3"})
		if err := s.Delete(ctx, "objects/1.json", "missing.json", "objects/3.json", "nofolder/x.json"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		// Deleting again, or nothing at all, is not an error either.
		if err := s.Delete(ctx, "objects/1.json"); err != nil {
			t.Fatalf("Delete of a deleted key: %v", err)
		}
		if err := s.Delete(ctx); err != nil {
			t.Fatalf("Delete of no keys: %v", err)
		}
		got, err := s.List(ctx, "")
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if diff := cmp.Diff([]string{"objects/2.json"}, got); diff != "" {
			t.Errorf("List(%q) after Delete mismatch (-want +got):\n%s", "", diff)
		}
		if _, err := s.Get(ctx, "objects/1.json"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q) after Delete: %v; want ErrNotFound", "objects/1.json", err)
		}
	})
}

// TestDeleteMany deletes more keys in one call than one S3 DeleteObjects request may name.
func TestDeleteMany(t *testing.T) {
	objects := map[string]string{"keep.json": "k"}
	var doomed []string
	for i := range 1500 {
		key := fmt.Sprintf("objects/%02x/%04d.json", i%256, i)
		objects[key] = "x"
		doomed = append(doomed, key)
	}
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		putAll(t, ctx, s, objects)
		if err := s.Delete(ctx, doomed...); err != nil {
			t.Fatalf("Delete of %d keys: %v", len(doomed), err)
		}
		got, err := s.List(ctx, "")
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if diff := cmp.Diff([]string{"keep.json"}, got); diff != "" {
			t.Errorf("List(%q) after Delete mismatch (-want +got):\n%s", "", diff)
		}
	})
}

func TestEnsureIdempotent(t *testing.T) {
	eachStore(t, false, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		for i := range 2 {
			if err := s.Ensure(ctx); err != nil {
				t.Fatalf("Ensure #%d: %v", i+1, err)
			}
		}
		if err := s.Put(ctx, "current.json", []byte("{}")); err != nil {
			t.Fatalf("Put after Ensure: %v", err)
		}
		// Ensure on a store that holds objects keeps them.
		if err := s.Ensure(ctx); err != nil {
			t.Fatalf("Ensure #3: %v", err)
		}
		if diff := cmp.Diff("{}", mustGet(t, ctx, s, "current.json")); diff != "" {
			t.Errorf("Get(%q) mismatch (-want +got):\n%s", "current.json", diff)
		}
	})
}

// TestBadKeys: both stores refuse the same keys, so a key that works in development with
// the folder also works in production with S3.
func TestBadKeys(t *testing.T) {
	bad := []string{"", "/etc/passwd", "../escape.json", "objects/../../escape.json", "objects/..",
		"./current.json", "objects//a.json", "objects/", `objects\a.json`, ".tmp-123", "objects/.tmp-1/a.json"}
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		for _, key := range bad {
			if err := s.Put(ctx, key, []byte("x")); err == nil {
				t.Errorf("Put(%q) succeeded; want an error", key)
			}
			if _, err := s.Get(ctx, key); err == nil || errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(%q) = %v; want an invalid-key error", key, err)
			}
			if err := s.Delete(ctx, "current.json", key); err == nil {
				t.Errorf("Delete(%q) succeeded; want an error", key)
			}
		}
		got, err := s.List(ctx, "")
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if diff := cmp.Diff([]string(nil), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("List(%q) after bad Puts mismatch (-want +got):\n%s", "", diff)
		}
	})
}

func TestConcurrentPuts(t *testing.T) {
	objects := map[string]string{}
	var want []string
	for i := range 500 {
		key := fmt.Sprintf("objects/%02x/%04d.json", i%64, i)
		objects[key] = fmt.Sprintf(`{"n":%d}`, i)
		want = append(want, key)
	}
	slices.Sort(want)
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		putAll(t, ctx, s, objects)
		got, err := s.List(ctx, "objects/")
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("List(%q) mismatch (-want +got):\n%s", "objects/", diff)
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(32)
		for key, body := range objects {
			g.Go(func() error {
				b, err := s.Get(gctx, key)
				if err != nil {
					return err
				}
				if string(b) != body {
					return fmt.Errorf("Get(%q) = %q, want %q", key, b, body)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Error(err)
		}
	})
}

// TestAtomicPut: a reader that loops Get while a writer alternates two bodies of the same key
// only ever sees one of the two bodies whole.
func TestAtomicPut(t *testing.T) {
	bodies := []string{strings.Repeat("a", 256<<10), strings.Repeat("b", 256<<10)}
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		if err := s.Put(ctx, "current.json", []byte(bodies[0])); err != nil {
			t.Fatalf("Put: %v", err)
		}
		stop := make(chan struct{})
		written := make(chan error, 1)
		go func() { written <- putAlternating(ctx, s, "current.json", bodies, stop) }()
		for reads := 1; ; reads++ {
			got, err := s.Get(ctx, "current.json")
			if err != nil || (string(got) != bodies[0] && string(got) != bodies[1]) {
				close(stop)
				<-written
				t.Fatalf("Get #%d = %d bytes starting %.8q and ending %.8q, %v; want one of the two bodies whole",
					reads, len(got), got, got[max(0, len(got)-8):], err)
			}
			select {
			case err := <-written:
				if err != nil {
					t.Fatalf("Put: %v", err)
				}
				return
			default:
			}
		}
	})
}

// putAlternating writes bodies in turn to key 100 times, or until stop is closed.
func putAlternating(ctx context.Context, s store.Store, key string, bodies []string, stop <-chan struct{}) error {
	for i := range 100 {
		select {
		case <-stop:
			return nil
		default:
		}
		if err := s.Put(ctx, key, []byte(bodies[i%len(bodies)])); err != nil {
			return err
		}
	}
	return nil
}

func TestCanceledContext(t *testing.T) {
	eachStore(t, true, func(t *testing.T, _ context.Context, _ config.Store, s store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Put(ctx, "current.json", []byte("{}")); !errors.Is(err, context.Canceled) {
			t.Errorf("Put with a canceled context = %v; want context.Canceled", err)
		}
	})
}
