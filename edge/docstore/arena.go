package docstore

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// The bytes of the documents (bodies and gzip bodies, some 1.7 times the snapshot's size)
// live outside the Go heap, packed into chunks of memory mapped from the OS. In the heap
// they would count towards the GC's goal, which lets the heap grow to twice what is live
// before collecting: bytes that never become garbage would double the edge's memory under
// load for no gain, and the GC would track a hundred thousand objects for them. Mapped
// memory is outside the GC's accounting, and unmapping it returns it to the OS at once.
// Measured against the same chunks made with make, alternating: under load the process's
// RSS is 43% higher in the heap (BenchmarkStaticServeFull, 100,000 classes, 4 runs each:
// 183-186 against 263-266 MiB), the peak of a first load 25% higher (BenchmarkSnapshotMemory
// peak-x, 3 runs each: 3.30-3.37 against 4.13-4.23 times the snapshot). It costs no CPU
// that shows for gzip reads (14.9 against 14.1 µs per exchange, p=0.34); plain reads took
// 15% less CPU from the heap (12.9 against 15.2 µs, p=0.03). Settled after a load the two
// hold the same (rss-x 1.77-1.87), so the gain is the memory a host must provision for an
// edge under load and while it loads.
//
// A chunk is unmapped by a cleanup when the GC finds nothing referring to it any more:
// every document holds its chunk, so a chunk lives as long as any snapshot, load or request
// holds one of its documents. Code that hands a document's bytes to something that may
// keep using them after the document itself is dead must keep the document alive until
// then (runtime.KeepAlive); the edge's serve does, around its Write.

// chunkSize is the size of a chunk: large enough that a catalogue needs few mappings, small
// enough that a chunk which only a few reused documents still use wastes little (see
// compact).
const chunkSize = 1 << 20

// mappedBytes is the memory mapped for chunks in this process, for the metrics and tests.
var mappedBytes atomic.Int64

// chunk is one mapping that holds the bytes of many documents.
type chunk struct {
	mem  []byte // the mapping; read-only once its load has finished
	used int    // bytes handed out, a prefix of mem; fixed once its load has finished
}

func newChunk(size int) (*chunk, error) {
	mem, err := mapMemory(size)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes for documents: %w", size, err)
	}
	mappedBytes.Add(int64(len(mem)))
	c := &chunk{mem: mem}
	runtime.AddCleanup(c, unmapChunk, mem)
	return c, nil
}

func unmapChunk(mem []byte) {
	mappedBytes.Add(-int64(len(mem)))
	unmapMemory(mem)
}

// arena hands out the memory for the documents of one load, from chunks of its own: a
// load never writes into a chunk that a snapshot being served uses.
type arena struct {
	mu     sync.Mutex
	size   int    // of the chunks it maps; 0 is chunkSize
	cur    *chunk // the chunk being filled
	chunks []*chunk
}

// sizedArena returns an arena for about n bytes of documents: its chunks are n rounded up
// to pages, or chunkSize when that is less. A delta brings a few documents: a chunk of
// chunkSize for them would map a megabyte at every swap for a few pages used.
func sizedArena(n int) *arena {
	return &arena{size: min(chunkSize, roundPage(max(n, 1)))}
}

// maxDocument bounds a document with its gzip body: a document finds its bytes by 32-bit
// offsets. No catalogue comes near it.
const maxDocument = math.MaxUint32

// alloc reserves n bytes for one document's bytes and returns the chunk and the offset they
// are at. A document larger than a quarter of a chunk gets a mapping of its own, so that a
// large course list does not leave most of a chunk unused.
func (a *arena) alloc(n int) (*chunk, int, error) {
	if n > maxDocument {
		return nil, 0, fmt.Errorf("a document of %d bytes with its gzip body is too large", n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cur
	switch {
	case n > chunkSize/4:
		var err error
		if c, err = newChunk(n); err != nil {
			return nil, 0, err
		}
		a.chunks = append(a.chunks, c)
	case c == nil || c.used+n > len(c.mem):
		var err error
		size := chunkSize
		if a.size > 0 {
			size = max(a.size, n)
		}
		if c, err = newChunk(size); err != nil {
			return nil, 0, err
		}
		a.chunks = append(a.chunks, c)
		a.cur = c
	}
	off := c.used
	c.used += n
	return c, off, nil
}

// heapChunk is memory in the Go heap for the bytes of a document that belongs to no
// snapshot (the API description): nothing maps or unmaps it.
func heapChunk(n int) *chunk { return &chunk{mem: make([]byte, n), used: n} }

// copyOf returns a document with the same content as d whose bytes are in a's memory.
func (a *arena) copyOf(d *Document) (Document, error) {
	b := d.bytes()
	c, off, err := a.alloc(len(b))
	if err != nil {
		return Document{}, err
	}
	copy(c.mem[off:], b)
	return placed(d.hash, c, off, len(d.Body()), len(b)), nil
}

// copyAll replaces every document of docs with a copy in a's memory.
func (a *arena) copyAll(docs docIndex) error {
	for h, d := range docs {
		if d == nil {
			continue
		}
		c, err := a.copyOf(d)
		if err != nil {
			return err
		}
		docs[h] = &c
	}
	return nil
}

// seal makes a's chunks read-only, once its load has written every document: a stray
// write into a snapshot being served then faults instead of corrupting it silently.
func (a *arena) seal() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.chunks {
		if err := protectMemory(c.mem); err != nil {
			return fmt.Errorf("protect document memory: %w", err)
		}
	}
	a.cur = nil
	return nil
}

// holding is what a snapshot's documents hold of the chunks: a snapshot loaded from a
// delta updates its base's by the documents it changed, to decide without a look at every
// document whether the chunks hold too much that no route uses any more (wasteful).
type holding struct {
	refs map[*chunk]int32 // the routes whose document is in each chunk
	// live is the bytes of the routes' documents with their gzip bodies, a document
	// shared by several routes once per route, as the memory target counts the
	// snapshot's bytes.
	live int64
}

func (h *holding) add(d *Document) {
	h.refs[d.chunk]++
	h.live += int64(d.end - d.off)
}

func (h *holding) remove(d *Document) {
	if h.refs[d.chunk]--; h.refs[d.chunk] <= 0 {
		delete(h.refs, d.chunk)
	}
	h.live -= int64(d.end - d.off)
}

// wasteful reports whether the chunks hold more than compact allows: a quarter more than
// the documents, and a chunk. A chunk counts the pages it has written, which are what is
// resident: a delta's chunk is mostly small.
func (h *holding) wasteful() bool {
	var held int64
	for c := range h.refs {
		held += int64(roundPage(c.used))
	}
	return held > h.live+h.live/4+chunkSize
}

// pageSize is the size of the pages the OS maps memory in.
var pageSize = os.Getpagesize()

func roundPage(n int) int { return (n + pageSize - 1) / pageSize * pageSize }

// compact decides whether a load reusing docs should copy them into its own arena instead
// of keeping the chunks they are in. Reusing leaves the bytes where they are, which is free,
// but a chunk stays mapped as long as any of its documents is used: as documents change
// from build to build, older chunks hold more and more bytes that no snapshot uses. Once
// the chunks of the reused documents hold more than a quarter more than those documents
// (plus one chunk, so that small catalogues are not copied at every swap), copying them
// bounds the waste at that; it costs one copy of the catalogue, a few tens of
// milliseconds, and twice its memory until the previous snapshot is collected.
func compact(docs docIndex) bool {
	var live, held int
	chunks := map[*chunk]bool{}
	for _, d := range docs {
		if d == nil {
			continue
		}
		live += int(d.end - d.off)
		if !chunks[d.chunk] {
			chunks[d.chunk] = true
			held += d.chunk.used
		}
	}
	return held > live+live/4+chunkSize
}
