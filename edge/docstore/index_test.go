package docstore

import (
	"maps"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pos is an entry of a test index: the document numbered p (its hash's first byte).
type pos struct {
	id int64
	p  byte
}

func docNumbered(p byte) *Document { return &Document{hash: [32]byte{p}, chunk: &chunk{}} }

// numbered gives each entry its numbered document.
func numbered(entries []pos) []idDoc {
	var out []idDoc
	for _, e := range entries {
		out = append(out, idDoc{e.id, docNumbered(e.p)})
	}
	return out
}

// contents returns what x holds, id -> number, failing t on an id seen twice.
func contents(t *testing.T, name string, x *idIndex) map[int64]byte {
	t.Helper()
	got := map[int64]byte{}
	x.each(func(id int64, d *Document) {
		if _, dup := got[id]; dup {
			t.Errorf("%s.each: id %d twice", name, id)
		}
		got[id] = d.hash[0]
	})
	return got
}

// checkGet checks x.get for ids around the interesting ones against want.
func checkGet(t *testing.T, name string, x *idIndex, want map[int64]byte) {
	t.Helper()
	ids := []int64{math.MinInt64, -1, 0, 1, 2, 4, 7, 8, 67, 68, 69, 70, 127, 128, 129, 300, math.MaxInt64 - 1, math.MaxInt64}
	for id := range want {
		ids = append(ids, id, id+1, id-1)
	}
	for _, id := range ids {
		var got byte
		if d := x.get(id); d != nil {
			got = d.hash[0]
		}
		if got != want[id] {
			t.Errorf("%s.get(%d) = document %d, want %d", name, id, got, want[id])
		}
	}
}

func TestIDIndex(t *testing.T) {
	tests := []struct {
		name      string
		entries   []pos
		denseLen  int64 // which ids are in the pages: those below it
		sparseLen int
	}{
		{"empty", nil, 1, 0},
		{"dense", []pos{{1, 5}, {2, 6}, {3, 7}, {7, 8}}, 8, 0},
		{"a large id goes to the map", []pos{{1, 5}, {math.MaxInt64, 6}, {70, 7}}, 2, 2},
		// Two entries: ids below 2*2+64 = 68 are in the pages, 68 and above in the map.
		{"the bound", []pos{{67, 1}, {68, 2}}, 68, 1},
	}
	for _, tt := range tests {
		x := newIDIndex(numbered(tt.entries))
		name := "newIDIndex(" + tt.name + ")"
		if x.denseLen != tt.denseLen || len(x.sparse) != tt.sparseLen {
			t.Errorf("%s: ids below %d in the pages and %d in the map, want below %d and %d",
				name, x.denseLen, len(x.sparse), tt.denseLen, tt.sparseLen)
		}
		want := map[int64]byte{}
		for _, e := range tt.entries {
			want[e.id] = e.p
		}
		checkGet(t, name, &x, want)
		if diff := cmp.Diff(want, contents(t, name, &x)); diff != "" {
			t.Errorf("%s.each mismatch (-want +got):\n%s", name, diff)
		}
		if x.n != len(tt.entries) {
			t.Errorf("%s.n = %d, want %d", name, x.n, len(tt.entries))
		}
	}
}

// TestIDIndexWith: an index with changes finds what newIDIndex would, and keeps its
// layout's bounds: ids that the grown number of ids brings below twice it go into the
// pages (from the map too), and once removals leave the pages holding more than two slots
// per id (and a page) it is indexed anew.
func TestIDIndexWith(t *testing.T) {
	want := map[int64]byte{1000: 9}
	var entries []pos
	for id := int64(1); id <= 100; id++ {
		want[id] = 1
		entries = append(entries, pos{id, 1})
	}
	x := newIDIndex(numbered(append(entries, pos{1000, 9})))
	if len(x.sparse) != 1 {
		t.Fatalf("newIDIndex: %d ids in the map, want 1000 alone", len(x.sparse))
	}
	wantX := maps.Clone(want)

	var grow []pos // 400 ids more: ids below 2*501+64 belong in the pages
	for id := int64(101); id <= 500; id++ {
		want[id] = 2
		grow = append(grow, pos{id, 2})
	}
	grown := x.with(numbered(grow))
	checkWith(t, "grown", &grown, want)
	if len(grown.sparse) != 0 || grown.denseLen <= 1000 {
		t.Errorf("grown: ids below %d in the pages and %d in the map, want 1000 in the pages", grown.denseLen, len(grown.sparse))
	}

	var shrink []idDoc // all but 20 ids and 1000 go
	for id := int64(1); id <= 480; id++ {
		delete(want, id)
		shrink = append(shrink, idDoc{id, nil})
	}
	shrunk := grown.with(shrink)
	checkWith(t, "shrunk", &shrunk, want)
	if slots, limit := int64(len(shrunk.pages))*idPageSize, int64(2*shrunk.n+denseSlack+idPageSize); slots > limit {
		t.Errorf("shrunk: %d slots in pages for %d ids, want at most %d", slots, shrunk.n, limit)
	}
	checkWith(t, "x after the changes over it", &x, wantX)
}

// checkWith checks what x holds against want.
func checkWith(t *testing.T, name string, x *idIndex, want map[int64]byte) {
	t.Helper()
	checkGet(t, name, x, want)
	if diff := cmp.Diff(want, contents(t, name, x)); diff != "" {
		t.Errorf("%s.each mismatch (-want +got):\n%s", name, diff)
	}
	if x.n != len(want) {
		t.Errorf("%s.n = %d, want %d", name, x.n, len(want))
	}
}

// TestIDIndexPagesInOneArray: newIDIndex allocates its pages as one array, not a page
// apiece (8 KB each for 7 KB of documents); a change allocates only the pages it copies
// and shares the others, until a quarter of the pages are copies, when the index is made
// anew in one array.
func TestIDIndexPagesInOneArray(t *testing.T) {
	const pages = 100
	var entries []pos
	for id := int64(1); id < pages*idPageSize; id++ {
		entries = append(entries, pos{id, 1})
	}
	docs := numbered(entries)
	if allocs := testing.AllocsPerRun(5, func() { newIDIndex(docs) }); allocs > 8 {
		t.Errorf("newIDIndex of %d pages: %.0f allocations, want at most 8", pages, allocs)
	}
	x := newIDIndex(docs)
	want := contents(t, "x", &x)

	// A change in each of 10 pages: 10 copies, 90 pages shared.
	var few []idDoc
	for i := int64(0); i < 10; i++ {
		few = append(few, idDoc{i*idPageSize + 5, docNumbered(2)})
	}
	y := x.with(few)
	shared := 0
	for i := range y.pages {
		if y.pages[i] == x.pages[i] {
			shared++
		}
	}
	if y.copied != 10 || shared != pages-10 {
		t.Errorf("10 pages changed: %d copies and %d pages shared, want 10 and %d", y.copied, shared, pages-10)
	}

	// 20 pages more: 30 copies in all, more than a quarter: made anew.
	wantZ := maps.Clone(want)
	var more []idDoc
	for i := int64(0); i < 30; i++ {
		wantZ[i*idPageSize+5] = 2
		if i >= 10 {
			more = append(more, idDoc{i*idPageSize + 5, docNumbered(2)})
		}
	}
	z := y.with(more)
	checkWith(t, "z", &z, wantZ)
	if z.copied != 0 || z.pages[0] == y.pages[0] || z.pages[50] == x.pages[50] {
		t.Errorf("30 pages changed: %d copies, want the index made anew (0)", z.copied)
	}
	checkWith(t, "x after the changes over it", &x, want)
}
