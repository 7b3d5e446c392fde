package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	// Bytes is the sum of the current snapshot's documents, the figure an edge's memory
	// is sized from (config/OPERATIONS.md); a run reports only the bytes it stored.
	Bytes int64
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
	if st.Current != nil {
		m, err := snapshot.ReadManifest(ctx, p.Store, ptr.ID)
		if err != nil {
			return st, err
		}
		for _, e := range m.Documents {
			st.Bytes += e.Size
		}
	}
	return st, nil
}
