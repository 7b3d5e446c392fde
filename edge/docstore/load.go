package docstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// fetchParallel bounds the documents fetched at once: enough to hide the store's latency,
// few enough not to flood it or hold many bodies in flight.
const fetchParallel = 32

// getTimeout bounds one read from the store, so that a connection that hangs cannot stall
// the loader for ever; the whole load has no deadline, since a first load of a large
// catalogue legitimately takes a while.
const getTimeout = time.Minute

// timeoutGetter gives every Get its own deadline.
type timeoutGetter struct{ snapshot.Getter }

func (g timeoutGetter) Get(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, getTimeout)
	defer cancel()
	return g.Getter.Get(ctx, key)
}

// GetMax is Get refusing more than limit bytes (snapshot.GetMax): snapshot's readers use it
// for every document, at the size its manifest entry gives, and for the manifest.
func (g timeoutGetter) GetMax(ctx context.Context, key string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, getTimeout)
	defer cancel()
	return snapshot.GetMax(ctx, g.Getter, key, limit)
}

// Load reads the snapshot m describes from g into memory, whole or not at all. A Holder's
// loads also reuse the documents it holds already.
func Load(ctx context.Context, g snapshot.Getter, m *snapshot.Manifest) (*Snapshot, error) {
	return loadSnapshot(ctx, g, m, nil)
}

// loadSnapshot builds the in-memory snapshot of m. A document whose hash one of the reuse
// indexes already holds is taken from there; only the others are read from g, at most
// fetchParallel at a time, each checked against its hash and compressed once. fetched
// receives every document read, when it is not nil, also when the load fails, so that a
// retry need not read them again. Any failure fails the whole load: a partial snapshot is
// never returned.
func loadSnapshot(ctx context.Context, g snapshot.Getter, m *snapshot.Manifest, fetched docIndex, reuse ...docIndex) (*Snapshot, error) {
	if err := checkManifest(m); err != nil {
		return nil, err
	}
	docs, missing := plan(m, reuse)
	a := &arena{}
	if compact(docs) {
		if err := a.copyAll(docs); err != nil {
			return nil, fmt.Errorf("load snapshot %s: %w", m.ID, err)
		}
	}
	if err := fetch(ctx, g, missing, a, docs, fetched); err != nil {
		return nil, fmt.Errorf("load snapshot %s: %w", m.ID, err)
	}
	return newMemSnapshot(m, docs)
}

// fetch reads the documents of missing from g, at most fetchParallel at a time, each
// checked against its hash and compressed once into a's memory, and seals a. Every
// document read goes into docs, and into fetched when it is not nil, also when fetch fails.
func fetch(ctx context.Context, g snapshot.Getter, missing []snapshot.Entry, a *arena, docs, fetched docIndex) error {
	got := make([]Document, len(missing))
	done := make([]bool, len(missing))
	comp := newCompressors()
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(fetchParallel)
	for i, e := range missing {
		eg.Go(func() error {
			b, err := snapshot.ReadDocument(ectx, g, e)
			if err != nil {
				return err
			}
			h, _ := parseHash(e.Hash) // checked by the caller, and b by ReadDocument
			got[i], err = comp.document(h, b, a)
			done[i] = err == nil
			return err
		})
	}
	err := eg.Wait()
	if serr := a.seal(); err == nil {
		err = serr
	}
	for i := range missing {
		if done[i] {
			if fetched != nil {
				fetched[got[i].hash] = &got[i]
			}
			docs[got[i].hash] = &got[i]
		}
	}
	return err
}

// plan sorts the documents of m into those already in memory and those to fetch, each hash
// once however many routes share it. m must have passed checkManifest.
func plan(m *snapshot.Manifest, reuse []docIndex) (docs docIndex, missing []snapshot.Entry) {
	docs = make(docIndex, len(m.Documents))
	for _, e := range m.Documents {
		h, _ := parseHash(e.Hash)
		if _, seen := docs[h]; seen {
			continue
		}
		docs[h] = lookup(reuse, h)
		if docs[h] == nil {
			missing = append(missing, e)
		}
	}
	return docs, missing
}

func lookup(indexes []docIndex, hash [sha256.Size]byte) *Document {
	for _, idx := range indexes {
		if d := idx[hash]; d != nil {
			return d
		}
	}
	return nil
}

// compressors lends out gzip writers, one per CPU: compressing is CPU work, so more at once
// would only hold more writers, and a writer at BestCompression carries about a megabyte of
// state. They belong to one load and go with it, instead of staying in a pool.
type compressors chan *compressor

// compressor is a gzip writer and the buffer it writes into, reused document after
// document.
type compressor struct {
	w   *gzip.Writer
	buf bytes.Buffer
}

func newCompressors() compressors {
	c := make(compressors, runtime.GOMAXPROCS(0))
	for range cap(c) {
		c <- nil // made on first use: a load that fetches one document makes one
	}
	return c
}

// document prepares body, whose SHA-256 is hash, for serving: it compresses it at the best
// level, once per load that first brings it, never per request, so the slower level costs
// nothing per request. The body and the gzip body are copied into a's memory, or the Go
// heap when a is nil, back to back and in exactly their size: the store's buffer and the
// compressor's have room to spare, and they go back to their owners.
func (cs compressors) document(hash [sha256.Size]byte, body []byte, a *arena) (Document, error) {
	c := <-cs
	defer func() { cs <- c }()
	if c == nil {
		c = &compressor{}
		c.w, _ = gzip.NewWriterLevel(nil, gzip.BestCompression) // the level is valid, so no error
	}
	gz, err := c.compress(body)
	if err != nil {
		return Document{}, fmt.Errorf("compress document %x: %w", hash, err)
	}
	n := len(body) + len(gz)
	mem, off := heapChunk(n), 0
	if a != nil {
		if mem, off, err = a.alloc(n); err != nil {
			return Document{}, err
		}
	}
	copy(mem.mem[off:], body)
	copy(mem.mem[off+len(body):], gz)
	return placed(hash, mem, off, len(body), n), nil
}

// compress returns the gzip of b, valid until the next call.
func (c *compressor) compress(b []byte) ([]byte, error) {
	c.buf.Reset()
	c.w.Reset(&c.buf)
	if _, err := c.w.Write(b); err != nil {
		return nil, err
	}
	if err := c.w.Close(); err != nil {
		return nil, err
	}
	return c.buf.Bytes(), nil
}

// NewDocument prepares a document that belongs to no snapshot (the API description): its
// bytes are in the Go heap, and its gzip body is made at once.
func NewDocument(body []byte) (*Document, error) {
	d, err := newCompressors().document(sha256.Sum256(body), body, nil)
	return &d, err
}
