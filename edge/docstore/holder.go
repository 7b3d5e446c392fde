// Package docstore holds the catalogue's current snapshot in memory for the edge: it loads
// the snapshot the store's pointer names (reusing every document it already holds, fetching
// and compressing only the others, into memory outside the Go heap), indexes it by route
// and id, swaps it in whole, keeps a copy in a disk cache to start from when the store is
// down, and polls the pointer. It reports every swap through Options.OnSwap.
package docstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Options are a Holder's dependencies and settings. Store is required.
type Options struct {
	Store        snapshot.Getter
	CacheDir     string        // edge.cache_dir; "" keeps no disk cache
	PollInterval time.Duration // edge.poll_interval
	// StartTimeout bounds the first load in Start; 0 is DefaultStartTimeout.
	StartTimeout time.Duration
	Logger       *slog.Logger // nil: slog.Default()
	// OnSwap, when set, is called with every snapshot swapped in, after the swap.
	OnSwap func(s *Snapshot)
	// OnRefuse, when set, is called once for every snapshot refused because its manifest
	// does not describe a whole snapshot (snapshot.ErrInvalidManifest).
	OnRefuse func(id string)
	// OnStore, when set, is told after every load attempt (at start, at each poll, by
	// Refresh) whether the store answered: failed is false when it did (the pointer
	// unchanged, a snapshot loaded or refused, none published yet), true when it did not.
	// Attempts cut short by the edge's shutdown are not reported.
	OnStore func(failed bool)
}

// Holder holds the current snapshot and keeps it current: it loads the snapshot the
// store's pointer names, swaps it in whole once it is completely in memory, and keeps
// serving the one it has whenever the store cannot give it a newer one.
type Holder struct {
	opts  Options
	log   *slog.Logger
	store snapshot.Getter
	cache *diskCache // nil without a CacheDir

	cur atomic.Pointer[Snapshot] // nil until a snapshot is loaded

	mu      sync.Mutex // one load at a time: the poller's and any other caller's
	lastErr string     // the last load failure logged (errKey), so that a lasting one is logged once
	// leftover holds the documents a failed load did fetch, by hash, so that the retry
	// fetches only the rest: a transient error in a large first load costs one document,
	// not the whole catalogue again. Guarded by mu.
	leftover docIndex
	// ptrTag is the version of the pointer that the snapshot being served was loaded from
	// (see pointer); "" forces the next poll to read it whole. Guarded by mu.
	ptrTag string
	// refused is the id of the last snapshot refused for an invalid manifest, and why: a
	// manifest is never rewritten, so the polls that follow answer the same refusal without
	// reading it again (up to 256 MiB each) until the pointer names another. Guarded by mu.
	refused    string
	refusedErr error
}

// New returns a Holder with no snapshot until Start.
func New(opts Options) *Holder {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	h := &Holder{opts: opts, log: opts.Logger.With("part", "snapshot"), store: timeoutGetter{opts.Store}}
	if opts.CacheDir != "" {
		h.cache = newDiskCache(opts.CacheDir)
	}
	return h
}

// Current returns the snapshot being served, or nil before the first load.
func (d *Holder) Current() *Snapshot { return d.cur.Load() }

// DefaultStartTimeout bounds the first load, which runs before the edge listens: a store
// that accepts connections but never answers (a network partition) would otherwise keep
// the edge from answering probes, and from serving the snapshot in edge.cache_dir, for
// minutes. A first load cut short is carried on by the poller, which keeps what it fetched
// (leftover).
const DefaultStartTimeout = 10 * time.Second

// Start loads the first snapshot and then polls the pointer every edge.poll_interval until
// ctx is done. When the store cannot give a snapshot at start, the one saved in
// edge.cache_dir is served until it can. The cached documents also spare the first load
// every fetch of a document that has not changed since the edge last ran.
func (d *Holder) Start(ctx context.Context) {
	seed, err := d.loadCache(ctx)
	if err != nil {
		d.log.Warn("cached snapshot not used", "dir", d.opts.CacheDir, "error", err)
	}
	var reuse []docIndex
	if seed != nil {
		reuse = append(reuse, seed.index())
	}
	sctx, cancel := context.WithTimeout(ctx, d.opts.StartTimeout)
	err = d.refresh(sctx, reuse...)
	cancel()
	if err != nil && seed != nil && d.Current() == nil {
		d.swap(seed, "cache", 0)
		release()
	}
	d.logResult(err)
	// A load that start's deadline cut short goes on at once, without a deadline: waiting
	// for the first tick would leave the edge answering 503 (or serving an older cached
	// snapshot) for a whole edge.poll_interval, which ops may set to minutes.
	cutShort := err != nil && sctx.Err() != nil && ctx.Err() == nil
	go d.poll(ctx, cutShort)
}

// loadCache reads the snapshot saved in edge.cache_dir, or returns nil when there is none.
func (d *Holder) loadCache(ctx context.Context) (*Snapshot, error) {
	if d.cache == nil {
		return nil, nil
	}
	return d.cache.load(ctx)
}

// poll refreshes every edge.poll_interval until ctx is done, and once at once when
// carryOn is set.
func (d *Holder) poll(ctx context.Context, carryOn bool) {
	t := time.NewTicker(d.opts.PollInterval)
	defer t.Stop()
	if carryOn {
		d.logResult(d.refresh(ctx))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.logResult(d.refresh(ctx))
		}
	}
}

// logResult logs a load failure once while it lasts, and the recovery from one.
func (d *Holder) logResult(err error) {
	d.reportStore(err)
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case err == nil && d.lastErr != "":
		d.log.Info("snapshot source recovered")
	case err != nil && errKey(err) != d.lastErr:
		cur := d.Current()
		level, msg := failureMessage(err, cur)
		d.log.Log(context.Background(), level, msg, "serving", snapshotID(cur), "store", fmt.Sprint(d.opts.Store), "error", err)
	}
	if err == nil {
		d.lastErr = ""
	} else {
		d.lastErr = errKey(err)
	}
}

// volatile matches the parts of an error's text that differ between attempts that failed
// alike: S3's request ids, and the local address of a connection.
var volatile = regexp.MustCompile(`(RequestID|HostID): [^,]*|tcp [0-9a-fA-F.:\[\]]*->`)

// errKey is err's text without its volatile parts: the failure logResult logs once while
// it lasts.
func errKey(err error) string { return volatile.ReplaceAllString(err.Error(), "$1") }

// failureMessage says what a refresh that failed with err means while cur is served (nil:
// nothing is), at the level it deserves.
func failureMessage(err error, cur *Snapshot) (slog.Level, string) {
	switch {
	case errors.Is(err, errNotCached):
		return slog.LevelWarn, "snapshot " + cur.id + " served, but not saved to edge.cache_dir: an edge started while the store is unreachable cannot serve it"
	case errors.Is(err, snapshot.ErrNoSnapshot):
		// As an edge started before the first build finds it, and one pointed at a
		// place the builder does not publish to: where it looked tells them apart.
		return slog.LevelInfo, "no snapshot in the store: not ready until the builder publishes one there (if one was published, store.url names another place)"
	case errors.Is(err, snapshot.ErrInvalidManifest) && cur == nil:
		return slog.LevelError, "snapshot refused: its manifest does not describe a whole snapshot; nothing is served: not ready until the builder publishes a whole one"
	case errors.Is(err, snapshot.ErrInvalidManifest):
		return slog.LevelError, "snapshot refused: its manifest does not describe a whole snapshot; the snapshot being served stays"
	case cur == nil:
		return slog.LevelWarn, "snapshot refresh failed; nothing is served: not ready until the store answers"
	}
	return slog.LevelWarn, "snapshot refresh failed; the snapshot being served stays"
}

// errNotCached is wrapped by the error of a refresh that serves its snapshot but could
// not save it to edge.cache_dir: the store answered, and only the cache is behind.
var errNotCached = errors.New("not saved to edge.cache_dir")

// reportStore tells OnStore whether the store answered the attempt that ended with err.
func (d *Holder) reportStore(err error) {
	switch {
	case d.opts.OnStore == nil || errors.Is(err, context.Canceled):
	case err == nil, errors.Is(err, snapshot.ErrNoSnapshot), errors.Is(err, snapshot.ErrInvalidManifest), errors.Is(err, errNotCached):
		d.opts.OnStore(false)
	default:
		d.opts.OnStore(true)
	}
}

func snapshotID(s *Snapshot) string {
	if s == nil {
		return ""
	}
	return s.id
}

// Refresh loads the snapshot the pointer names now, as the poller does at every tick, and
// logs a failure as the poller does; it returns the failure too.
func (d *Holder) Refresh(ctx context.Context) error {
	err := d.refresh(ctx)
	d.logResult(err)
	return err
}

// Swap makes s the snapshot Current returns, as a load does: s may be one Load returned,
// or one this Holder served before. The next poll reads the pointer whole again.
func (d *Holder) Swap(s *Snapshot) {
	d.mu.Lock()
	d.ptrTag = ""
	d.mu.Unlock()
	d.swap(s, "caller", 0)
}

// refresh loads the snapshot the pointer names when it is not the one being served, taking
// unchanged documents from the current snapshot and from reuse, swaps it in, and saves it
// to edge.cache_dir. On any failure before the swap the current snapshot stays.
func (d *Holder) refresh(ctx context.Context, reuse ...docIndex) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, tag, changed, err := d.pointer(ctx)
	if err != nil || !changed {
		return err
	}
	cur := d.Current()
	if cur != nil && cur.id == p.ID {
		d.ptrTag = tag
		return nil
	}
	if p.ID == d.refused {
		return d.refusedErr
	}
	l, err := d.load(ctx, p, cur, reuse)
	if errors.Is(err, snapshot.ErrInvalidManifest) {
		d.refuse(p.ID, err)
	}
	if err != nil {
		return err
	}
	next := l.snap
	next.publishedAt = p.PublishedAt
	// The load's garbage goes back to the OS (see release) before the snapshot is served,
	// so that the edge's memory has settled once it reads ready; again after the swap and
	// the save, for the chunks only the previous snapshot used and the save's garbage. A
	// load from a delta fetched a few documents and copied a few index pages: its garbage
	// is not worth two forced collections per change, unless it copied every document,
	// which leaves as many bytes in the chunks only the previous snapshot uses.
	source := "store"
	if l.delta != nil {
		source = "store, delta over " + cur.id
	}
	if l.delta == nil || l.copied {
		release()
		defer release()
	}
	d.swap(next, source, l.fetched)
	d.ptrTag = tag
	if d.cache == nil {
		return nil
	}
	var touched []string
	if l.delta != nil {
		touched = slices.AppendSeq(slices.Clone(l.delta.Removed), maps.Keys(l.delta.Documents))
	}
	// The snapshot is served: saving it must not be cut short by start's deadline, or the
	// cache would stay a snapshot behind until the next one is published.
	if err := d.cache.save(context.WithoutCancel(ctx), next, cur, touched); err != nil {
		return fmt.Errorf("%w: %w", errNotCached, err)
	}
	return nil
}

// refuse records that snapshot id was refused for an invalid manifest: the snapshot being
// served stays, and the cache keeps it (nothing is saved or pruned).
func (d *Holder) refuse(id string, err error) {
	d.refused, d.refusedErr = id, err
	if d.opts.OnRefuse != nil {
		d.opts.OnRefuse(id)
	}
}

// loaded is a snapshot a refresh loaded.
type loaded struct {
	snap    *Snapshot
	fetched int             // documents read from the store
	delta   *snapshot.Delta // what it was made of over the snapshot served; nil: its manifest
	copied  bool            // made from delta, with every document copied (see compacted)
}

// load loads the snapshot p names: from its delta when it is built over cur, the snapshot
// served, and the delta applies to it; from its manifest otherwise, reusing the documents
// of cur and reuse. What a failed load fetched is kept for the next (leftover).
func (d *Holder) load(ctx context.Context, p snapshot.Pointer, cur *Snapshot, reuse []docIndex) (loaded, error) {
	if d.leftover != nil {
		reuse = append(reuse, d.leftover)
	}
	fetched := docIndex{}
	if delta := d.delta(ctx, p, cur); delta != nil {
		next, compacted, err := cur.patch(ctx, d.store, delta, fetched, reuse...)
		switch {
		case err == nil:
			d.leftover = nil
			return loaded{next, len(fetched), delta, compacted}, nil
		case !errors.Is(err, errDeltaUnusable):
			d.keepLeftover(delta.Documents, fetched)
			return loaded{}, err
		}
		d.log.Warn("snapshot delta not used; reading the whole manifest", "snapshot", p.ID, "base", p.Base, "error", err)
	}
	m, err := snapshot.ReadManifest(ctx, d.store, p.ID)
	if err != nil {
		return loaded{}, err
	}
	if cur != nil {
		reuse = append(reuse, cur.index())
	}
	next, err := loadSnapshot(ctx, d.store, m, fetched, reuse...)
	if err != nil {
		d.keepLeftover(m.Documents, fetched)
		return loaded{}, err
	}
	d.leftover = nil
	return loaded{next, len(fetched), nil, false}, nil
}

// release collects the garbage of a load and returns the freed memory to the OS at once.
// A load's transient data (the decoded manifest, every fetched body in the store client's
// buffer, the compressors) is several times the snapshot's size, and the runtime would
// otherwise keep it resident and return it only at the scavenger's slow pace: the edge's
// memory would read as its peak for minutes after every swap. The GC is also what unmaps
// the chunks of documents no snapshot uses any more (arena.go). The cost is a full
// GC of a heap that holds no document bytes, twice per new snapshot, none per request.
func release() { debug.FreeOSMemory() }

// keepLeftover keeps what a failed load of entries (a manifest's or a delta's) fetched,
// with what earlier failed loads fetched that entries use too: bounded by one snapshot
// however long the failures last.
func (d *Holder) keepLeftover(entries map[string]snapshot.Entry, fetched docIndex) {
	for _, e := range entries {
		h, _ := parseHash(e.Hash) // loadSnapshot failed, maybe because of a bad hash
		if doc := d.leftover[h]; doc != nil {
			fetched[h] = doc
		}
	}
	d.leftover = fetched
}

// swap makes next the snapshot every later request reads.
func (d *Holder) swap(next *Snapshot, source string, fetched int) {
	d.cur.Store(next)
	if d.opts.OnSwap != nil {
		d.opts.OnSwap(next)
	}
	d.log.Info("snapshot loaded", "snapshot", next.id, "built_at", next.head.BuiltAt,
		"source", source, "documents", next.routeCount(), "fetched", fetched)
}
