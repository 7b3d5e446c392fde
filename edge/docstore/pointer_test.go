package docstore

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// countingStore is a real store that records every read: "get KEY" for a whole read,
// "if-changed KEY" for a conditional one and "unchanged KEY" for one answered not modified.
type countingStore struct {
	store.Store
	mu    sync.Mutex
	reads []string
}

func (c *countingStore) note(r string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = append(c.reads, r)
}

func (c *countingStore) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reads
	c.reads = nil
	slices.Sort(r)
	return r
}

func (c *countingStore) Get(ctx context.Context, key string) ([]byte, error) {
	c.note("get " + key)
	return c.Store.Get(ctx, key)
}

func (c *countingStore) GetMax(ctx context.Context, key string, limit int64) ([]byte, error) {
	c.note("get " + key)
	return c.Store.GetMax(ctx, key, limit)
}

func (c *countingStore) GetIfChanged(ctx context.Context, key, tag string, limit int64) ([]byte, string, error) {
	b, next, err := c.Store.(conditionalGetter).GetIfChanged(ctx, key, tag, limit)
	if tag != "" && next == tag && err != nil {
		c.note("unchanged " + key)
	} else {
		c.note("if-changed " + key)
	}
	return b, next, err
}

var published = time.Date(2027, 3, 1, 12, 0, 5, 0, time.UTC)

// put publishes docs as snapshot id, as the builder does: objects, the delta over base
// when base is not "", the manifest, the pointer.
func put(t *testing.T, st store.Store, id, base string, docs map[string]string, prev map[string]string) {
	t.Helper()
	ctx := context.Background()
	whole(docs)
	m := &snapshot.Manifest{ID: id, Header: snapshot.Header{BuiltAt: published, Today: "2027-03-01", Timezone: "UTC"},
		Documents: map[string]snapshot.Entry{}}
	var touched []string
	for route, body := range docs {
		h := snapshot.Hash([]byte(body))
		m.Documents[route] = snapshot.Entry{Hash: h, Size: int64(len(body))}
		if err := st.Put(ctx, snapshot.ObjectKey(h), []byte(body)); err != nil {
			t.Fatal(err)
		}
		if prev[route] != body {
			touched = append(touched, route)
		}
	}
	for route := range prev {
		if _, ok := docs[route]; !ok {
			touched = append(touched, route)
		}
	}
	m.Counts = snapshot.CountsOf(m.Documents)
	if base != "" {
		putJSON(t, st, snapshot.DeltaKey(id), snapshot.NewDelta(m, base, touched))
	}
	putJSON(t, st, snapshot.ManifestKey(id), m)
	putJSON(t, st, snapshot.PointerKey, snapshot.Pointer{ID: id, PublishedAt: published, Previous: []string{}, Base: base})
}

// whole adds to docs, in place, the routes every snapshot has (snapshot.RequiredRoutes)
// that it lacks, with the documents the builder renders for a catalogue without courses:
// a manifest without them is refused.
func whole(docs map[string]string) {
	for _, r := range snapshot.RequiredRoutes() {
		if _, ok := docs[r]; !ok {
			docs[r] = `{"data":[]}`
			if r == snapshot.RoutePopular {
				docs[r] = `[]`
			}
		}
	}
}

func putJSON(t *testing.T, st store.Store, key string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), key, b); err != nil {
		t.Fatal(err)
	}
}

// TestPollReadsLittle checks what a Holder reads from each kind of store: a poll with no
// new snapshot costs one conditional read of the pointer answered "unchanged"; a snapshot
// built over the one served is loaded from its delta and its new documents, without its
// manifest; one built over another, or without a delta, from its manifest.
func TestPollReadsLittle(t *testing.T) {
	for name, cfg := range testkit.Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			real, err := store.Open(ctx, store.Options(cfg))
			if err != nil {
				t.Fatal(err)
			}
			if err := real.Ensure(ctx); err != nil {
				t.Fatal(err)
			}
			st := &countingStore{Store: real}
			a := map[string]string{"/public/courses": `{"data":[]}`, "/public/class/1": `{"v":1}`, "/public/class/2": `{"v":2}`}
			put(t, st, "snap-a", "", a, nil)
			h := New(Options{Store: st, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			mustRefresh(t, h)
			st.take()

			mustRefresh(t, h)
			if diff := cmp.Diff([]string{"unchanged current.json"}, st.take()); diff != "" {
				t.Errorf("reads of a poll without a new snapshot mismatch (-want +got):\n%s", diff)
			}

			b := maps.Clone(a)
			b["/public/class/1"], b["/public/class/3"] = `{"v":"1b"}`, `{"v":3}`
			delete(b, "/public/class/2")
			put(t, st, "snap-b", "snap-a", b, a)
			st.take()
			mustRefresh(t, h)
			want := []string{"get " + snapshot.DeltaKey("snap-b"), "get " + objectKey(`{"v":"1b"}`), "get " + objectKey(`{"v":3}`), "if-changed current.json"}
			if diff := cmp.Diff(sorted(want), st.take()); diff != "" {
				t.Errorf("reads of a snapshot built over the one served mismatch (-want +got):\n%s", diff)
			}
			checkServes(t, h, "snap-b", b)
			if got := h.Current().PublishedAt(); !got.Equal(published) {
				t.Errorf("PublishedAt = %v, want the pointer's %v", got, published)
			}

			c := maps.Clone(b)
			c["/public/class/3"] = `{"v":"3c"}`
			put(t, st, "snap-c", "snap-a", c, a) // over a snapshot the edge does not serve
			st.take()
			mustRefresh(t, h)
			want = []string{"get " + snapshot.ManifestKey("snap-c"), "get " + objectKey(`{"v":"3c"}`), "if-changed current.json"}
			if diff := cmp.Diff(sorted(want), st.take()); diff != "" {
				t.Errorf("reads of a snapshot over another mismatch (-want +got):\n%s", diff)
			}
			checkServes(t, h, "snap-c", c)
		})
	}
}

func mustRefresh(t *testing.T, h *Holder) {
	t.Helper()
	if err := h.Refresh(context.Background()); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
}

func objectKey(body string) string { return snapshot.ObjectKey(snapshot.Hash([]byte(body))) }

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// checkServes checks that h serves snapshot id with exactly docs.
func checkServes(t *testing.T, h *Holder, id string, docs map[string]string) {
	t.Helper()
	s := h.Current()
	if s.ID() != id {
		t.Fatalf("serving %s, want %s", s.ID(), id)
	}
	got := map[string]string{}
	for route, e := range s.manifest().Documents {
		for _, want := range docs {
			if snapshot.Hash([]byte(want)) == e.Hash {
				got[route] = want
			}
		}
	}
	if diff := cmp.Diff(docs, got); diff != "" {
		t.Errorf("documents of %s mismatch (-want +got):\n%s", id, diff)
	}
}
