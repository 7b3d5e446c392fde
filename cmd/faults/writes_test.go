package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// faultyStore is a real store whose writes fail on demand: failPut is asked before every Put
// and failDelete is returned by every Delete. Both are set between publications, never
// during one.
type faultyStore struct {
	store.Store
	failPut    func(key string) error
	failDelete error
}

func (f *faultyStore) Put(ctx context.Context, key string, body []byte) error {
	if f.failPut != nil {
		if err := f.failPut(key); err != nil {
			return err
		}
	}
	return f.Store.Put(ctx, key, body)
}

func (f *faultyStore) Delete(ctx context.Context, keys ...string) error {
	if f.failDelete != nil {
		return f.failDelete
	}
	return f.Store.Delete(ctx, keys...)
}

var errInjected = errors.New("injected write failure")

// catalogueDocs returns a catalogue of n class documents of generation gen.
func catalogueDocs(n, gen int) map[string][]byte {
	docs := make(map[string][]byte, n)
	for i := range n {
		docs[snapshot.ClassRoute(int64(i+1))] = fmt.Appendf(nil, `{"course_id":1,"generation":%d,"class":%d}`, gen, i+1)
	}
	return docs
}

// writeFault is one write of a publication made to fail.
type writeFault struct {
	name      string
	failPut   func() func(key string) error // a fresh fault per subtest: nthObject counts
	failDel   bool
	published bool // the failure comes after the pointer
	wantMsg   string
}

// writeDocs is the number of documents of the catalogues published under faults; each
// publication changes all of them.
const writeDocs = 40

// TestWriteErrorsLeavePointer makes one write of a publication fail, in process, through a
// store wrapper around a real local folder and a real MinIO bucket (issue 4, guarantee 1b).
// Before the pointer is written a failure must leave the pointer on the first snapshot,
// complete, and say what failed; a failure to collect old snapshots after the pointer has
// published the new one and says so. Either way the next publication goes through.
// builder/publish's TestPublishFailureLeavesCurrentSnapshot covers the same points with a
// three-document catalogue.
func TestWriteErrorsLeavePointer(t *testing.T) {
	t.Parallel()
	faults := []writeFault{
		{name: "first object", failPut: nthObject(1), wantMsg: "store object objects/"},
		{name: "object half-way", failPut: nthObject(writeDocs / 2), wantMsg: "store object objects/"},
		{name: "last object", failPut: nthObject(writeDocs), wantMsg: "store object objects/"},
		{name: "manifest", failPut: keyPrefix(snapshot.ManifestPrefix), wantMsg: "write manifest "},
		{name: "pointer", failPut: keyPrefix(snapshot.PointerKey), wantMsg: "write pointer: "},
		{name: "collection after the pointer", failDel: true, published: true, wantMsg: "is published, but collecting old snapshots failed"},
	}
	for kind, cfg := range testkit.Stores(t) {
		t.Run(kind, func(t *testing.T) {
			for _, f := range faults {
				t.Run(f.name, func(t *testing.T) {
					t.Parallel() // each case publishes under a prefix of its own
					cfg := cfg
					cfg.URL += "/" + strings.ReplaceAll(f.name, " ", "-")
					publishUnderFault(t, cfg, f)
				})
			}
		})
	}
}

// publishUnderFault publishes a first catalogue to the store of cfg, then a changed one with
// fault f, then a third one without faults.
func publishUnderFault(t *testing.T, cfg config.Store, f writeFault) {
	ctx := context.Background()
	real, err := store.Open(ctx, store.Options(cfg))
	if err == nil {
		err = real.Ensure(ctx)
	}
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	fs := &faultyStore{Store: real}
	// Keep 1 and the shortest grace period: every publication collects the one before.
	p := &publish.Publisher{Store: fs, Keep: 1, MaxShrink: 0.5, Workers: 8, Grace: time.Nanosecond}
	meta := publish.Meta{Today: "2027-03-01", Timezone: "UTC", Counts: snapshot.Counts{Courses: 1, Classes: writeDocs}}
	first, err := p.Publish(ctx, catalogueDocs(writeDocs, 1), meta, false)
	if err != nil {
		t.Fatalf("first publication: %v", err)
	}
	if f.failPut != nil {
		fs.failPut = f.failPut()
	}
	if f.failDel {
		fs.failDelete = errInjected
	}
	res, err := p.Publish(ctx, catalogueDocs(writeDocs, 2), meta, false)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), f.wantMsg) {
		t.Fatalf("Publish with the %s failing = %v; want the injected error, saying %q", f.name, err, f.wantMsg)
	}
	want := first.SnapshotID
	if f.published {
		want = res.SnapshotID
		if !errors.Is(err, publish.ErrCollect) {
			t.Errorf("Publish with the collection failing = %v, want it to wrap publish.ErrCollect", err)
		}
	}
	in := &inspector{st: real, verified: map[string]bool{}}
	if got := in.current(t); got.ID != want {
		t.Fatalf("pointer after the %s failed = %s, want %s", f.name, got.ID, want)
	}

	// The next publication, without faults, goes through over what the failed one left.
	fs.failPut, fs.failDelete = nil, nil
	next, err := p.Publish(ctx, catalogueDocs(writeDocs, 3), meta, false)
	if err != nil {
		t.Fatalf("publication after the %s failed: %v", f.name, err)
	}
	if got := in.current(t); got.ID != next.SnapshotID {
		t.Fatalf("pointer after the next publication = %s, want %s", got.ID, next.SnapshotID)
	}
}

// nthObject returns a maker of faults that fail the nth Put of a document object.
func nthObject(nth int) func() func(string) error {
	return func() func(string) error {
		var mu sync.Mutex
		seen := 0
		return func(key string) error {
			if !strings.HasPrefix(key, "objects/") {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			seen++
			if seen == nth {
				return errInjected
			}
			return nil
		}
	}
}

// keyPrefix returns a maker of faults that fail every Put of a key that starts with prefix.
func keyPrefix(prefix string) func() func(string) error {
	return func() func(string) error {
		return func(key string) error {
			if strings.HasPrefix(key, prefix) {
				return errInjected
			}
			return nil
		}
	}
}
