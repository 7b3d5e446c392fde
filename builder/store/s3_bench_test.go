package store_test

import (
	"context"
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/store"
)

// benchBody is a class document's typical size.
var benchBody = make([]byte, 380)

// BenchmarkS3Put stores small documents one request each, 64 in flight, the way a build
// uploads to a service that takes no batches. ns/op is the wall time per object.
func BenchmarkS3Put(b *testing.B) {
	s, _ := newS3(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := range b.N {
		g.Go(func() error { return s.Put(gctx, benchKey(i), benchBody) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkS3PutBatch stores the same documents in batches of 1,000, 8 in flight, the way a
// build uploads to MinIO. ns/op is the wall time per object.
func BenchmarkS3PutBatch(b *testing.B) {
	s, _ := newS3(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for start := 0; start < b.N; start += 1000 {
		g.Go(func() error {
			objs := make([]store.Object, 0, 1000)
			for i := start; i < min(start+1000, b.N); i++ {
				objs = append(objs, store.Object{Key: benchKey(i), Body: benchBody})
			}
			return s.PutBatch(gctx, objs)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

func benchKey(i int) string { return fmt.Sprintf("objects/%02x/%064d.json", i%256, i) }
