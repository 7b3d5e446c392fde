package store

import (
	"context"
	"errors"
)

// ErrBatchUnsupported is wrapped by the error PutBatch returns when the store turned out not
// to take batches; nothing of that batch remains, and the caller stores the objects one by
// one with Put instead.
var ErrBatchUnsupported = errors.New("the store does not take batches of objects")

// Object is one object of a batch.
type Object struct {
	Key  string
	Body []byte
}

// Batcher is a Store that can take many small objects in one request. A full build stores
// about 100,000 documents of a few hundred bytes each; one request per object makes the
// per-request cost of the store (signature check, routing, metadata) the whole build time.
type Batcher interface {
	Store
	// PutBatch stores every object of objs, each atomically as Put does, or returns an
	// error. After an error some objects of the batch may be stored, none of them partially.
	// An error wrapping ErrBatchUnsupported means none of the batch is stored.
	PutBatch(ctx context.Context, objs []Object) error
}
