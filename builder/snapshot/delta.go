package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
)

// DeltaKey is the key of the delta of snapshot id. Only a snapshot built over another (a
// change build) has one; it is written before the snapshot's manifest.
func DeltaKey(id string) string { return deltaPrefix + id + ".json" }

const deltaPrefix = "deltas/"

// MaxDeltaSize bounds the delta a reader accepts: a change build lists at most a few
// thousand documents.
const MaxDeltaSize = 64 << 20

// Delta is a snapshot written as what it changed over the snapshot it was built on, Base:
// a reader that holds Base's manifest gets this snapshot's from the delta (Apply), a few
// entries instead of the whole manifest (~11 MB at 100,000 documents). The snapshot's full
// manifest is stored as well, for every other reader.
type Delta struct {
	ID   string `json:"snapshot"`
	Base string `json:"base"`
	Header
	// Documents are the entries added or replaced (re-rendered ones that did not change
	// may be among them); Removed the routes dropped.
	Documents map[string]Entry `json:"documents"`
	Removed   []string         `json:"removed"`
	// Feed is the snapshot's whole Feed: its tombstones are few (deletions of the last
	// feeds.retention), and every change may add or drop some.
	Feed *Feed `json:"feed,omitempty"`
}

// NewDelta returns the delta of m over its base for the routes touched: those it rendered
// and those it removed.
func NewDelta(m *Manifest, base string, touched []string) *Delta {
	d := &Delta{
		ID: m.ID, Base: base, Header: m.Header, Documents: map[string]Entry{}, Removed: []string{},
		Feed: m.Feed,
	}
	for _, r := range touched {
		if e, ok := m.Documents[r]; ok {
			d.Documents[r] = e
		} else {
			d.Removed = append(d.Removed, r)
		}
	}
	return d
}

// Apply returns the manifest of d's snapshot, given base, the manifest of d.Base, which it
// does not modify. The result must hold as many documents as d counts; whether it is a whole
// snapshot is the reader's check (Manifest.Check), which the edge makes of every snapshot it
// would serve, delta or not.
func (d *Delta) Apply(base *Manifest) (*Manifest, error) {
	if base.ID != d.Base {
		return nil, fmt.Errorf("apply delta %s: it is over %s, not %s", d.ID, d.Base, base.ID)
	}
	m := &Manifest{
		ID: d.ID, Header: d.Header, Documents: maps.Clone(base.Documents), Feed: d.Feed,
	}
	for _, r := range d.Removed {
		delete(m.Documents, r)
	}
	maps.Copy(m.Documents, d.Documents)
	if len(m.Documents) != d.Counts.Documents {
		return nil, fmt.Errorf("apply delta %s: %d documents, the delta counts %d", d.ID, len(m.Documents), d.Counts.Documents)
	}
	return m, nil
}

// WriteDelta stores d, after the objects it names and before its snapshot's manifest.
func WriteDelta(ctx context.Context, s Putter, d *Delta) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode delta %s: %w", d.ID, err)
	}
	if err := s.Put(ctx, DeltaKey(d.ID), b); err != nil {
		return fmt.Errorf("write delta %s: %w", d.ID, err)
	}
	return nil
}

// ReadDelta returns the delta of snapshot id; an error wrapping store.ErrNotFound when it
// has none.
func ReadDelta(ctx context.Context, s Getter, id string) (*Delta, error) {
	b, err := GetMax(ctx, s, DeltaKey(id), MaxDeltaSize)
	if err != nil {
		return nil, fmt.Errorf("read delta %s: %w", id, err)
	}
	var d Delta
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("read delta %s: %w", id, err)
	}
	if d.ID != id || d.Base == "" || d.Documents == nil {
		return nil, fmt.Errorf("read delta %s: malformed (snapshot %q, base %q)", id, d.ID, d.Base)
	}
	return &d, nil
}
