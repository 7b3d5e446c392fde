package docstore

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
)

// TestArenaAlloc: small documents are packed into one chunk until it is full, and a
// document larger than a quarter of a chunk gets a mapping of its own without ending the
// chunk being filled.
func TestArenaAlloc(t *testing.T) {
	type place struct {
		Chunk, Offset, ChunkLen int
	}
	sizes := []int{100, chunkSize/4 + 1, 200, chunkSize / 4, chunkSize / 4, chunkSize / 4, chunkSize / 4}
	want := []place{
		{0, 0, chunkSize},
		{1, 0, chunkSize/4 + 1},
		{0, 100, chunkSize},
		{0, 300, chunkSize},
		{0, 300 + chunkSize/4, chunkSize},
		{0, 300 + chunkSize/2, chunkSize},
		{2, 0, chunkSize}, // 300 + chunkSize would not fit in chunk 0
	}
	a := &arena{}
	chunks := map[*chunk]int{}
	var got []place
	for _, n := range sizes {
		c, offset, err := a.alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := chunks[c]; !ok {
			chunks[c] = len(chunks)
		}
		got = append(got, place{chunks[c], offset, len(c.mem)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("alloc(%v) places mismatch (-want +got):\n%s", sizes, diff)
	}
	if err := a.seal(); err != nil {
		t.Errorf("seal: %v", err)
	}
}

// TestDocumentBytes: a document's body and gzip body are its part of the chunk, each capped
// at its length, so that an append cannot write into the next document.
func TestDocumentBytes(t *testing.T) {
	c := &chunk{mem: []byte("..BODYgz..")}
	d := placed([32]byte{}, c, 2, 4, 6)
	type part struct {
		Text     string
		Len, Cap int
	}
	of := func(b []byte) part { return part{string(b), len(b), cap(b)} }
	want := []part{{"BODY", 4, 4}, {"gz", 2, 2}, {"BODYgz", 6, 6}}
	if diff := cmp.Diff(want, []part{of(d.Body()), of(d.GzipBody()), of(d.bytes())}); diff != "" {
		t.Errorf("body, gzip body and bytes at 2 of %q mismatch (-want +got):\n%s", c.mem, diff)
	}
}

func TestCompact(t *testing.T) {
	docIn := func(c *chunk, n int) *Document { d := placed([32]byte{}, c, 0, n, n); return &d }
	whole := &chunk{used: 4 << 20}
	at := &chunk{used: 7 * (1 << 20) / 2} // the limit for the two documents in it together
	const mib = 1 << 20
	// compact's limit for 2 MiB of documents: 2 + 2/4 + 1 (the chunk size) = 3.5 MiB held.
	tests := []struct {
		name string
		docs docIndex
		want bool
	}{
		{"every byte of the chunk reused", docIndex{{1}: docIn(whole, 3*mib), {2}: docIn(whole, mib)}, false},
		{"waste at the limit", docIndex{{1}: docIn(&chunk{used: 7 * mib / 2}, 2*mib)}, false},
		{"a byte over the limit", docIndex{{1}: docIn(&chunk{used: 7*mib/2 + 1}, 2*mib)}, true},
		{"a chunk counted once", docIndex{{1}: docIn(at, mib), {2}: docIn(at, mib)}, false},
		{"a small catalogue wastes up to a chunk", docIndex{{1}: docIn(&chunk{used: chunkSize + 1000}, 800)}, false},
		{"documents not loaded yet do not count", docIndex{{1}: nil}, false},
	}
	for _, tt := range tests {
		if got := compact(tt.docs); got != tt.want {
			t.Errorf("compact(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestLoadCompacts: a swap that changes few documents keeps the unchanged ones where they
// are, in the previous load's chunks; one that changes most of them copies the rest into
// chunks of its own, so that the old chunks can go. Either way every document is whole.
func TestLoadCompacts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := store.NewLocal(dir)
	gen := docstoretest.NewCatalogue(6000, 20) // about 2.5 MB with the gzip bodies: three chunks
	load := func(id string, prev *Snapshot) *Snapshot {
		t.Helper()
		m, err := snapshot.ReadCurrent(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		var reuse []docIndex
		if prev != nil {
			reuse = append(reuse, prev.index())
		}
		s, err := loadSnapshot(ctx, st, m, nil, reuse...)
		if err != nil {
			t.Fatal(err)
		}
		checkBodies(t, s, gen)
		return s
	}
	gen.Publish(t, dir, "compact-0")
	s0 := load("compact-0", nil)

	gen.Change(t, dir, 1, "compact-1")
	s1 := load("compact-1", s0)
	if got, want := sharedChunks(s0, s1), chunksOf(s0); got != want {
		t.Errorf("after 1%% changed: %d chunks of the previous load still used, want all %d", got, want)
	}

	gen.Change(t, dir, 80, "compact-2")
	s2 := load("compact-2", s1)
	if got := sharedChunks(s1, s2); got != 0 {
		t.Errorf("after 80%% changed: %d chunks of the previous loads still used, want 0", got)
	}
}

// checkBodies compares every class document of s with the one gen published.
func checkBodies(t *testing.T, s *Snapshot, gen *docstoretest.Catalogue) {
	t.Helper()
	for id := 1; id <= gen.Classes(); id++ {
		want := gen.ClassBody(id)
		d := s.Class(int64(id))
		if d == nil || string(d.Body()) != want || docstoretest.Gunzip(t, d.GzipBody()) != want {
			t.Fatalf("snapshot %s: class %d is not the document published", s.id, id)
		}
	}
}

func chunksOf(s *Snapshot) int {
	seen := map[*chunk]bool{}
	s.eachDoc(func(d *Document) { seen[d.chunk] = true })
	return len(seen)
}

// sharedChunks counts the chunks that documents of both a and b are in.
func sharedChunks(a, b *Snapshot) int {
	inA := map[*chunk]bool{}
	a.eachDoc(func(d *Document) { inA[d.chunk] = true })
	shared := map[*chunk]bool{}
	b.eachDoc(func(d *Document) {
		if inA[d.chunk] {
			shared[d.chunk] = true
		}
	})
	return len(shared)
}
