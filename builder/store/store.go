// Package store keeps the catalogue's published objects: a local folder (the embedded
// default, no server needed) or any S3-compatible service. Both implement Store; the
// builder writes through it and the edge reads through it.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned by Get when the key does not exist.
var ErrNotFound = errors.New("object not found")

// ErrTooLarge is returned by GetMax when the object holds more bytes than asked for.
var ErrTooLarge = errors.New("object larger than allowed")

// Store is a flat namespace of immutable-by-convention objects. Put of one object is atomic:
// a reader sees the old bytes or the new ones, never a part.
type Store interface {
	// Get returns the whole object, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetMax is Get of an object of at most limit bytes: a larger one is refused with an
	// error wrapping ErrTooLarge, having read at most limit+1 of its bytes.
	GetMax(ctx context.Context, key string, limit int64) ([]byte, error)
	// Put writes the whole object atomically, replacing any object with that key.
	Put(ctx context.Context, key string, body []byte) error
	// Delete removes the objects; keys that do not exist are not an error.
	Delete(ctx context.Context, keys ...string) error
	// List returns every key that starts with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Ensure creates the folder or bucket when it does not exist yet.
	Ensure(ctx context.Context) error
	// String describes the store for messages (never credentials).
	String() string
}

// Options say which store to open. They hold the keys store.* of the configuration, and
// config.Store converts to them (store.Options(cfg.Store)): the store does not depend on
// the configuration's shape.
type Options struct {
	URL      string // file://PATH or s3://BUCKET/PREFIX
	Endpoint string // S3-compatible endpoint (MinIO); path-style addressing when set
	Region   string // S3 region
}

// Open returns the store that cfg.URL names: file://PATH or s3://BUCKET/PREFIX.
func Open(ctx context.Context, cfg Options) (Store, error) {
	switch {
	case strings.HasPrefix(cfg.URL, "file://"):
		return NewLocal(strings.TrimPrefix(cfg.URL, "file://")), nil
	case strings.HasPrefix(cfg.URL, "s3://"):
		return NewS3(ctx, cfg)
	}
	return nil, fmt.Errorf("store.url: must be file://PATH or s3://BUCKET/PREFIX (got %q)", cfg.URL)
}
