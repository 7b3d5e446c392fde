package docstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
)

// BenchmarkSnapshotMemory loads a catalogue shaped like the benchmark's full dataset
// (100,000 classes of about 400 bytes, 2,000 courses, 7 course lists of about 400 KB)
// through the real loader, from a local store, and reports what the edge holds for it
// against the snapshot's bytes (the sum of its documents' sizes, which the target of 3×
// is stated against). It then publishes a build in which 1% of the classes changed, then
// one in which 30% did, and reports the same after each swap. It is slow (about a minute)
// and measures memory, not time: run it alone, once:
//
//	go test -run '^$' -bench BenchmarkSnapshotMemory -benchtime 1x ./edge/docstore/
//
// Metrics, each as a multiple of the snapshot's bytes: heap-x is the growth of the Go
// heap in use, offheap-x the memory mapped for document bytes outside it (an upper bound:
// the unused end of a chunk is mapped but never touched, so never resident), held-x their
// sum, and rss-x
// the growth of the process's resident memory, all after the load and a forced GC; the
// -swap1 and -swap30 variants are the same after each swap. peak-x is the highest resident
// memory during the first load, above the level before it.
func BenchmarkSnapshotMemory(b *testing.B) {
	for b.Loop() {
		dir := b.TempDir()
		gen := docstoretest.NewCatalogue(100_000, 2_000)
		snapBytes := gen.Publish(b, dir, "mem-0")
		d := benchHolder(store.NewLocal(dir))
		before := settledMemory()
		resetPeak()
		start := time.Now()
		if err := d.refresh(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "load-s")
		b.ReportMetric(float64(peakRSS()-before.rss)/float64(snapBytes), "peak-x")
		reportMemory(b, "", settledMemory().minus(before), snapBytes)
		for _, pct := range []int{1, 30} {
			snapBytes = gen.Change(b, dir, pct, fmt.Sprintf("mem-%d", pct))
			if err := d.refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
			reportMemory(b, "-swap"+strconv.Itoa(pct), settledMemory().minus(before), snapBytes)
		}
		runtime.KeepAlive(d)
	}
}

// benchHolder is a holder of the snapshots in st that never polls by itself.
func benchHolder(st store.Store) *Holder {
	return New(Options{Store: st, PollInterval: time.Hour, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
}

// memory is what the process holds, in bytes.
type memory struct{ heap, offHeap, rss int64 }

func (m memory) minus(o memory) memory {
	return memory{m.heap - o.heap, m.offHeap - o.offHeap, m.rss - o.rss}
}

// settledMemory collects garbage twice (the second drops what sync.Pools kept through the
// first, and unmaps the chunks whose cleanups the first queued), returns freed memory to
// the OS, and reads what is left.
func settledMemory() memory {
	runtime.GC()
	time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memory{heap: int64(ms.HeapInuse), offHeap: mappedBytes.Load(), rss: docstoretest.ProcStatus("VmRSS")}
}

func reportMemory(b *testing.B, suffix string, m memory, snapBytes int64) {
	x := func(n int64) float64 { return float64(n) / float64(snapBytes) }
	b.ReportMetric(x(m.heap), "heap-x"+suffix)
	b.ReportMetric(x(m.offHeap), "offheap-x"+suffix)
	b.ReportMetric(x(m.heap+m.offHeap), "held-x"+suffix)
	b.ReportMetric(x(m.rss), "rss-x"+suffix)
}

// resetPeak starts VmHWM again from the current resident memory (Linux: clear_refs 5).
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS() int64 { return docstoretest.ProcStatus("VmHWM") }
