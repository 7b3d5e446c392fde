package docstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// conditionalGetter is a store that can answer "unchanged" to a read of an object the
// reader already holds (store.S3 and store.Local are): the pointer is read that way at every
// poll, so that an edge polling every second costs the store one bodiless 304 a second.
type conditionalGetter interface {
	GetIfChanged(ctx context.Context, key, tag string, limit int64) ([]byte, string, error)
}

// pointer reads the store's pointer. It returns ok false, and no error, when the pointer is
// still the version last seen by a refresh that succeeded (tag); the version it read
// otherwise, which the caller records once the refresh has succeeded.
func (d *Holder) pointer(ctx context.Context) (p snapshot.Pointer, tag string, ok bool, err error) {
	c, conditional := d.opts.Store.(conditionalGetter)
	if !conditional {
		p, err := snapshot.ReadPointer(ctx, d.store)
		return p, "", err == nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, getTimeout)
	defer cancel()
	b, tag, err := c.GetIfChanged(ctx, snapshot.PointerKey, d.ptrTag, snapshot.MaxPointerSize)
	switch {
	case errors.Is(err, store.ErrNotModified):
		return snapshot.Pointer{}, tag, false, nil
	case errors.Is(err, store.ErrNotFound):
		return snapshot.Pointer{}, "", false, snapshot.ErrNoSnapshot
	case err != nil:
		return snapshot.Pointer{}, "", false, fmt.Errorf("read pointer: %w", err)
	}
	p, err = snapshot.ParsePointer(b)
	return p, tag, err == nil, err
}

// delta returns the delta of the snapshot p names when it was built over cur, the snapshot
// served (p.Base, a change build's): a few entries instead of the whole manifest (~11 MB
// at 100,000 documents). It returns nil, and the caller reads the manifest, otherwise or
// when the delta cannot be read.
func (d *Holder) delta(ctx context.Context, p snapshot.Pointer, cur *Snapshot) *snapshot.Delta {
	if cur == nil || p.Base == "" || p.Base != cur.id {
		return nil
	}
	delta, err := snapshot.ReadDelta(ctx, d.store, p.ID)
	if err != nil { // a delta over another snapshot is refused where it is applied (planDelta)
		d.log.Warn("snapshot delta not used; reading the whole manifest", "snapshot", p.ID, "base", p.Base, "error", err)
		return nil
	}
	return delta
}
