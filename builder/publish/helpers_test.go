package publish

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// recorder wraps a real store, records every Put key in order and, through its func field,
// can fail or interrupt the nth Put (counting from 1).
type recorder struct {
	store.Store
	mu    sync.Mutex
	puts  []string
	onPut func(n int, key string) error // nil: every Put goes through
}

func (r *recorder) Put(ctx context.Context, key string, body []byte) error {
	r.mu.Lock()
	r.puts = append(r.puts, key)
	n := len(r.puts)
	r.mu.Unlock()
	if r.onPut != nil {
		if err := r.onPut(n, key); err != nil {
			return err
		}
	}
	return r.Store.Put(ctx, key, body)
}

// reset forgets the recorded Puts and the failure.
func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.puts, r.onPut = nil, nil
}

// objectPuts returns how many recorded Puts stored document objects.
func (r *recorder) objectPuts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, k := range r.puts {
		if strings.HasPrefix(k, "objects/") {
			n++
		}
	}
	return n
}

var errInjected = errors.New("injected failure")

// forEachStore runs f once against a fresh local folder and once against a fresh MinIO
// bucket, each wrapped in a recorder.
func forEachStore(t *testing.T, f func(t *testing.T, r *recorder)) {
	for name, cfg := range testkit.Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, store.Options(cfg))
			if err != nil {
				t.Fatalf("open store: %v", err)
			}
			if err := s.Ensure(ctx); err != nil {
				t.Fatalf("ensure store: %v", err)
			}
			f(t, &recorder{Store: s})
		})
	}
}

// clock is a fake clock that moves one second on every reading, so snapshot ids of
// successive publications sort in publication order.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// advance moves the clock on by d.
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newPublisher returns a publisher on a fake clock whose grace period (a second) has passed
// for every earlier manifest by the time a publication collects.
func newPublisher(s store.Store, keep int) *Publisher {
	return &Publisher{Store: s, Keep: keep, MaxShrink: 0.5, Now: newClock().Now, Workers: 8, Grace: time.Second}
}

// meta returns build metadata with the given counts.
func meta(courses, classes int) Meta {
	return Meta{Today: "2027-03-01", Timezone: "UTC", Counts: snapshot.Counts{Courses: courses, Classes: classes}}
}

// docsOf returns a small catalogue: the route of each document and its bytes.
func docsOf(pairs ...string) map[string][]byte {
	d := make(map[string][]byte)
	for i := 0; i < len(pairs); i += 2 {
		d[pairs[i]] = []byte(pairs[i+1])
	}
	return d
}

func mustPublish(t *testing.T, p *Publisher, docs map[string][]byte) Result {
	t.Helper()
	res, err := p.Publish(context.Background(), docs, meta(1, 1), false)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return res
}

func currentID(t *testing.T, s store.Store) string {
	t.Helper()
	ptr, err := snapshot.ReadPointer(context.Background(), s)
	if err != nil {
		t.Fatalf("ReadPointer: %v", err)
	}
	return ptr.ID
}

func listKeys(t *testing.T, s store.Store, prefix string) []string {
	t.Helper()
	keys, err := s.List(context.Background(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}

// objectKeys returns the sorted object keys of the given document bodies.
func objectKeys(bodies ...string) []string {
	var keys []string
	for _, b := range bodies {
		keys = append(keys, snapshot.ObjectKey(snapshot.Hash([]byte(b))))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
