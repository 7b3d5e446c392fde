package store

import (
	"context"
	"errors"
)

// Observe returns st reporting the outcome of each of its operations to observe: nil when
// the store answered (a missing object is an answer), the error otherwise. Operations cut
// short by their context (a shutdown, a deadline of the caller's) are not reported: they say
// nothing of the store. The builder and the edge count these in their metrics, so that a
// store outage can be alerted on. A Batcher stays a Batcher.
func Observe(st Store, observe func(error)) Store {
	o := observed{Store: st, observe: observe}
	if b, ok := st.(Batcher); ok {
		return observedBatcher{observed: o, batcher: b}
	}
	return o
}

type observed struct {
	Store
	observe func(error)
}

// report passes err to observe unless ctx ended or the store simply had no such object.
func (o observed) report(ctx context.Context, err error) {
	switch {
	case ctx.Err() != nil:
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrTooLarge):
		o.observe(nil)
	default:
		o.observe(err)
	}
}

func (o observed) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := o.Store.Get(ctx, key)
	o.report(ctx, err)
	return b, err
}

func (o observed) GetMax(ctx context.Context, key string, limit int64) ([]byte, error) {
	b, err := o.Store.GetMax(ctx, key, limit)
	o.report(ctx, err)
	return b, err
}

func (o observed) Put(ctx context.Context, key string, body []byte) error {
	err := o.Store.Put(ctx, key, body)
	o.report(ctx, err)
	return err
}

func (o observed) Delete(ctx context.Context, keys ...string) error {
	err := o.Store.Delete(ctx, keys...)
	o.report(ctx, err)
	return err
}

func (o observed) List(ctx context.Context, prefix string) ([]string, error) {
	keys, err := o.Store.List(ctx, prefix)
	o.report(ctx, err)
	return keys, err
}

func (o observed) Ensure(ctx context.Context) error {
	err := o.Store.Ensure(ctx)
	o.report(ctx, err)
	return err
}

type observedBatcher struct {
	observed
	batcher Batcher
}

// PutBatch reports a store that takes no batches as an answer: the caller then puts the
// objects one by one, which are reported in their turn.
func (o observedBatcher) PutBatch(ctx context.Context, objs []Object) error {
	err := o.batcher.PutBatch(ctx, objs)
	if errors.Is(err, ErrBatchUnsupported) {
		o.report(ctx, nil)
	} else {
		o.report(ctx, err)
	}
	return err
}
