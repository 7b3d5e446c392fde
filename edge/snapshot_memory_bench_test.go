package edge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// BenchmarkSnapshotMemory loads a catalogue shaped like the benchmark's full dataset
// (100,000 classes of about 400 bytes, 2,000 courses, 7 course lists of about 400 KB)
// through the real loader, from a local store, and reports what the edge holds for it
// against the snapshot's bytes (the sum of its documents' sizes, which the target of 3×
// is stated against). It then publishes a build in which 1% of the classes changed, then
// one in which 30% did, and reports the same after each swap. It is slow (about a minute)
// and measures memory, not time: run it alone, once:
//
//	go test -run '^$' -bench BenchmarkSnapshotMemory -benchtime 1x ./edge/
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
		gen := newCatalogueGen(100_000, 2_000)
		snapBytes := gen.publish(b, dir, "mem-0")
		d := benchStaticDocs(b, store.NewLocal(dir))
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
			snapBytes = gen.change(b, dir, pct, fmt.Sprintf("mem-%d", pct))
			if err := d.refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
			reportMemory(b, "-swap"+strconv.Itoa(pct), settledMemory().minus(before), snapBytes)
		}
		runtime.KeepAlive(d)
	}
}

// benchStaticDocs is the static half of a server with only what loading needs: no
// database, no routes.
func benchStaticDocs(b testing.TB, st store.Store) *staticDocs {
	b.Helper()
	cfg := testConfig()
	s := &Server{opts: Options{Store: st}, cfg: cfg.Edge, log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		metrics: newMetrics(prometheus.NewRegistry())}
	return newStaticDocs(s)
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
	return memory{heap: int64(ms.HeapInuse), offHeap: mappedBytes.Load(), rss: procStatus("VmRSS")}
}

func reportMemory(b *testing.B, suffix string, m memory, snapBytes int64) {
	x := func(n int64) float64 { return float64(n) / float64(snapBytes) }
	b.ReportMetric(x(m.heap), "heap-x"+suffix)
	b.ReportMetric(x(m.offHeap), "offheap-x"+suffix)
	b.ReportMetric(x(m.heap+m.offHeap), "held-x"+suffix)
	b.ReportMetric(x(m.rss), "rss-x"+suffix)
}

// procStatus returns a memory field of /proc/self/status in bytes, or 0 where there is none.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeak starts VmHWM again from the current resident memory (Linux: clear_refs 5).
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS() int64 { return procStatus("VmHWM") }

// catalogueGen makes documents shaped like the builder's: class documents of about 400
// bytes of JSON drawn from small vocabularies (so that they compress like real ones), short
// course documents, and course lists of about 170 bytes per course. Each document is made
// from its id and version with a random source of its own, when it is written: the
// generator keeps only the versions, so that its own memory does not blur what the edge
// holds.
type catalogueGen struct {
	classes []int // version of class id i+1
	courses int
	round   int // of publish, so that the lists change at every build
}

func newCatalogueGen(classes, courses int) *catalogueGen {
	return &catalogueGen{classes: make([]int, classes), courses: courses}
}

var (
	genWords  = []string{"Forklift", "Operation", "Workshop", "Certified", "HVAC", "Exam", "Prep", "Network", "Security", "Safety", "Data", "Analysis", "Graphic", "Design", "Welding", "First", "Aid", "Leadership", "Excel", "Electrical"}
	genCities = [][3]string{{"Nashville", "TN", "37203"}, {"Albany", "NY", "12207"}, {"Pittsburgh", "PA", "15222"}, {"Austin", "TX", "78701"}, {"Denver", "CO", "80202"}}
	genTypes  = []string{"Blended", "Brick and Mortar", "Online"}
)

// genRand is the random source of one document: kind 0 a class, 1 a course, 2 a list.
func genRand(kind, id, version int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(kind)<<32|uint64(id), uint64(version)))
}

func genName(r *rand.Rand) string {
	n := make([]string, 2+r.IntN(3))
	for i := range n {
		n[i] = genWords[r.IntN(len(genWords))]
	}
	return strings.Join(n, " ")
}

func genDate(r *rand.Rand) string {
	return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(365)).Format(time.DateOnly)
}

// classBody is the document of class id as it is now.
func (g *catalogueGen) classBody(id int) string {
	v := g.classes[id-1]
	r := genRand(0, id, v)
	c := genCities[r.IntN(len(genCities))]
	return fmt.Sprintf(`{"course_id":%d,"course_name":%q,"course_type":%q,"start":%q,"end":%q,"schedule":"Fridays %d:00 PM - 5:00 PM","cost":%d,"can_register":%t,"location":{"name":"%s Learning Center","room":"Shop %c","city":%q,"state":%q,"zip":%q,"country":"United States"},"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":%d,"v":%d}`,
		1+r.IntN(g.courses), genName(r), genTypes[r.IntN(3)], genDate(r), genDate(r), 1+r.IntN(4),
		r.IntN(50)*100+95, r.IntN(2) == 0, c[0], 'A'+rune(r.IntN(6)), c[0], c[1], c[2], r.IntN(30), v)
}

func (g *catalogueGen) courseBody(id int) string {
	r := genRand(1, id, 0)
	return fmt.Sprintf(`{"id":%d,"name":%q,"type":%q,"description":"<p><strong>%s</strong>: %d hours of training, taught by working professionals.</p>"}`,
		id, genName(r), genTypes[r.IntN(3)], genName(r), 4+r.IntN(40))
}

// lists returns the 7 course lists (every combination of types) and popular.
func (g *catalogueGen) lists() map[string]string {
	docs := map[string]string{}
	for i, types := range [][]string{nil, {"Blended"}, {"Brick and Mortar"}, {"Online"},
		{"Blended", "Brick and Mortar"}, {"Blended", "Online"}, {"Brick and Mortar", "Online"}} {
		r := genRand(2, i, g.round)
		var b strings.Builder
		b.WriteString(`{"data":[`)
		for id := 1; id <= g.courses; id++ {
			if id > 1 {
				b.WriteByte(',')
			}
			c := genCities[r.IntN(len(genCities))]
			fmt.Fprintf(&b, `{"id":%d,"name":%q,"upcoming_class":{"start":%q,"end":%q,"type":%q,"city":%q,"state":%q,"cost":%d,"available_seats":%d}}`,
				id, genName(r), genDate(r), genDate(r), genTypes[r.IntN(3)], c[0], c[1], r.IntN(50)*100+95, r.IntN(30))
		}
		b.WriteString(`]}`)
		docs[snapshot.CoursesRoute(types)] = b.String()
	}
	docs[snapshot.RoutePopular] = fmt.Sprintf(`[{"id":1,"round":%d}]`, g.round)
	return docs
}

// publish writes the current documents into the local store at dir as snapshot id and
// returns the snapshot's bytes. Objects are written directly rather than through
// Local.Put, which syncs every file: 100,000 syncs would dominate the benchmark. Objects
// already there are skipped, as the builder skips them.
func (g *catalogueGen) publish(t testing.TB, dir, id string) int64 {
	t.Helper()
	g.round++
	m := snapshot.Manifest{ID: id, BuiltAt: time.Now().UTC(), Today: "2027-01-01", Timezone: "UTC",
		Documents: make(map[string]snapshot.Entry, len(g.classes)+g.courses+8)}
	var total int64
	put := func(route, body string) {
		h := snapshot.Hash([]byte(body))
		m.Documents[route] = snapshot.Entry{Hash: h, Size: int64(len(body))}
		total += int64(len(body))
		name := filepath.Join(dir, filepath.FromSlash(snapshot.ObjectKey(h)))
		if _, err := os.Stat(name); err == nil {
			return // content-addressed: an earlier build wrote it
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for route, body := range g.lists() {
		put(route, body)
	}
	for id := 1; id <= g.courses; id++ {
		put(snapshot.CourseRoute(int64(id)), g.courseBody(id))
	}
	for id := 1; id <= len(g.classes); id++ {
		put(snapshot.ClassRoute(int64(id)), g.classBody(id))
	}
	st := store.Store(store.NewLocal(dir))
	putJSON(t, st, snapshot.ManifestKey(id), m)
	putJSON(t, st, snapshot.PointerKey, snapshot.Pointer{ID: id, PublishedAt: m.BuiltAt})
	return total
}

// change renders pct percent of the classes again, spread over the whole range of ids so
// that the changes fall into every chunk, and publishes the result as snapshot id.
func (g *catalogueGen) change(t testing.TB, dir string, pct int, id string) int64 {
	for i := range g.classes {
		if (i*37)%100 < pct {
			g.classes[i]++
		}
	}
	return g.publish(t, dir, id)
}
