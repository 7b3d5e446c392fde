package docstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
)

// BenchmarkDeltaSwap measures the edge's swap of a change build's snapshot, loaded from its
// delta over the snapshot served, at 100,000 classes: one class and the lists changed, as
// a change to one class publishes. With "cache" the holder keeps edge.cache_dir too.
// swap-ms is from the refresh's start to the swap; refresh-ms adds the cache's save.
func BenchmarkDeltaSwap(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cache=%t", cached), func(b *testing.B) {
			dir := b.TempDir()
			gen := docstoretest.NewCatalogue(100_000, 2_000)
			gen.Publish(b, dir, "delta-0")
			var swapped time.Time
			opts := benchHolder(nil).opts
			opts.Store = store.NewLocal(dir)
			opts.OnSwap = func(*Snapshot) { swapped = time.Now() }
			if cached {
				opts.CacheDir = b.TempDir()
			}
			d := New(opts)
			if err := d.refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
			var swap, total time.Duration
			n := 0
			for b.Loop() {
				b.StopTimer()
				n++
				base := d.Current().ID()
				id := fmt.Sprintf("delta-%d", n)
				gen.ChangeClasses(b, dir, []int{1 + (n*7919)%gen.Classes()}, id, base)
				b.StartTimer()
				start := time.Now()
				if err := d.refresh(context.Background()); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				if d.Current().ID() != id {
					b.Fatalf("serving %s, want %s", d.Current().ID(), id)
				}
				swap += swapped.Sub(start)
			}
			b.ReportMetric(float64(swap.Milliseconds())/float64(n), "swap-ms")
			b.ReportMetric(float64(total.Milliseconds())/float64(n), "refresh-ms")
		})
	}
}
