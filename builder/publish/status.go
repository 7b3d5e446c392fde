package publish

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Snapshot describes one kept snapshot.
type Snapshot struct {
	ID string
	snapshot.Header
	Current bool
}

// Status is what the store holds: the current snapshot and every kept one.
type Status struct {
	Current     *Snapshot // nil when nothing is published yet
	PublishedAt time.Time // when the pointer was last written
	Kept        []Snapshot
	// LastChange is the newest kept snapshot built for change notifications, nil when
	// none is kept.
	LastChange *Snapshot
}

// ErrNoEarlier is returned by Rollback without an id when no kept snapshot is older than
// the current one.
var ErrNoEarlier = errors.New("no kept snapshot is older than the current one")

// Status returns the current snapshot and the kept ones, newest first.
func (p *Publisher) Status(ctx context.Context) (Status, error) {
	ptr, err := snapshot.ReadPointer(ctx, p.Store)
	if errors.Is(err, snapshot.ErrNoSnapshot) {
		ptr = snapshot.Pointer{}
	} else if err != nil {
		return Status{}, err
	}
	ids, err := p.manifestIDs(ctx)
	if err != nil {
		return Status{}, err
	}
	kept, _ := partition(ids, p.keep(), ptr)
	hs, err := p.readHeaders(ctx, kept)
	if err != nil {
		return Status{}, err
	}
	st := Status{PublishedAt: ptr.PublishedAt}
	for i, h := range hs {
		s := Snapshot{ID: kept[i], Header: h, Current: kept[i] == ptr.ID}
		st.Kept = append(st.Kept, s)
		if s.Current {
			st.Current = &s
		}
	}
	for i := range st.Kept {
		if b := st.Kept[i].Build; b != nil && b.Trigger == snapshot.TriggerChange && st.LastChange == nil {
			st.LastChange = &st.Kept[i]
		}
	}
	if ptr.ID != "" && st.Current == nil {
		return st, fmt.Errorf("the pointer names snapshot %s, whose manifest is missing", ptr.ID)
	}
	return st, nil
}

// Rollback makes the kept snapshot id current by rewriting the pointer; an empty id means
// the newest kept snapshot older than the current one. It checks first that the snapshot's
// manifest is sound and that every object it names is in the store, so a rollback never
// publishes a snapshot the edge could not load. It returns the id now current.
func (p *Publisher) Rollback(ctx context.Context, id string) (string, error) {
	ptr, err := snapshot.ReadPointer(ctx, p.Store)
	if err != nil {
		return "", fmt.Errorf("roll back: %w", err)
	}
	ids, err := p.manifestIDs(ctx)
	if err != nil {
		return "", err
	}
	kept, _ := partition(ids, p.keep(), ptr)
	target, err := rollbackTarget(kept, ptr.ID, id)
	if err != nil {
		return "", err
	}
	if target == ptr.ID {
		return target, nil
	}
	if err := p.verify(ctx, target); err != nil {
		return "", fmt.Errorf("roll back to %s: %w", target, err)
	}
	if _, err := p.writePointer(ctx, target, ""); err != nil {
		return "", fmt.Errorf("roll back to %s: %w", target, err)
	}
	return target, nil
}

// rollbackTarget picks the snapshot to roll back to among kept (newest first).
func rollbackTarget(kept []string, current, id string) (string, error) {
	if id == "" {
		for _, k := range kept {
			if k < current {
				return k, nil
			}
		}
		return "", fmt.Errorf("roll back from %s: %w", current, ErrNoEarlier)
	}
	for _, k := range kept {
		if k == id {
			return id, nil
		}
	}
	return "", fmt.Errorf("roll back: snapshot %q is not kept (kept, newest first: %s)", id, strings.Join(kept, ", "))
}

// verifySample is how many documents Rollback reads back and checks against their hashes,
// on top of checking that every object exists.
const verifySample = 16

// verify checks that snapshot id's manifest reads, that every object it names exists, and
// that a sample of them hold the bytes their hashes promise.
func (p *Publisher) verify(ctx context.Context, id string) error {
	m, err := snapshot.ReadManifest(ctx, p.Store, id)
	if err != nil {
		return err
	}
	present, err := p.listObjects(ctx, m)
	if err != nil {
		return err
	}
	entries := make([]snapshot.Entry, 0, len(m.Documents))
	for route, e := range m.Documents {
		if !present[snapshot.ObjectKey(e.Hash)] {
			return fmt.Errorf("the object of %s (%s) is missing", route, e.Hash)
		}
		entries = append(entries, e)
	}
	for range min(verifySample, len(entries)) {
		if _, err := snapshot.ReadDocument(ctx, p.Store, entries[rand.IntN(len(entries))]); err != nil {
			return err
		}
	}
	return nil
}

// listWorkers bounds the concurrent listings of verify.
const listWorkers = 16

// listObjects returns the keys of the objects that exist in the folders m's objects live in.
// Objects are spread over 256 folders by the first two hex digits of their hash; listing
// the folders concurrently is several times faster than one listing of 100,000 keys, which
// an S3 store pages through 1,000 keys at a time.
func (p *Publisher) listObjects(ctx context.Context, m *snapshot.Manifest) (map[string]bool, error) {
	folders := make(map[string]bool)
	for _, e := range m.Documents {
		k := snapshot.ObjectKey(e.Hash)
		folders[k[:strings.LastIndex(k, "/")+1]] = true
	}
	present := make(map[string]bool, len(m.Documents))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listWorkers)
	for f := range folders {
		g.Go(func() error {
			keys, err := p.Store.List(gctx, f)
			if err != nil {
				return fmt.Errorf("list objects: %w", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				present[k] = true
			}
			return nil
		})
	}
	return present, g.Wait()
}
