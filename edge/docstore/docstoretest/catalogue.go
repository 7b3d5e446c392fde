// Package docstoretest makes catalogues shaped like the builder's, for the tests and
// benchmarks of the edge's snapshot holder and server: the documents of a hundred thousand
// classes without a database or a build.
package docstoretest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// Catalogue makes documents shaped like the builder's: class documents of about 400
// bytes of JSON drawn from small vocabularies (so that they compress like real ones), short
// course documents, and course lists of about 170 bytes per course. Each document is made
// from its id and version with a random source of its own, when it is written: the
// generator keeps only the versions, so that its own memory does not blur what the edge
// holds.
type Catalogue struct {
	classes []int // version of class id i+1
	courses int
	round   int // of publish, so that the lists change at every build
}

// NewCatalogue returns a catalogue of the given numbers of classes and courses, every
// document at its first version.
func NewCatalogue(classes, courses int) *Catalogue {
	return &Catalogue{classes: make([]int, classes), courses: courses}
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

// ClassBody is the document of class id as it is now.
func (g *Catalogue) ClassBody(id int) string {
	v := g.classes[id-1]
	r := genRand(0, id, v)
	c := genCities[r.IntN(len(genCities))]
	return fmt.Sprintf(`{"course_id":%d,"course_name":%q,"course_type":%q,"start":%q,"end":%q,"schedule":"Fridays %d:00 PM - 5:00 PM","cost":%d,"can_register":%t,"location":{"name":"%s Learning Center","room":"Shop %c","city":%q,"state":%q,"zip":%q,"country":"United States"},"down_payment":null,"registration_id":null,"prev_reg_test_date":null,"open_seats":%d,"v":%d}`,
		1+r.IntN(g.courses), genName(r), genTypes[r.IntN(3)], genDate(r), genDate(r), 1+r.IntN(4),
		r.IntN(50)*100+95, r.IntN(2) == 0, c[0], 'A'+rune(r.IntN(6)), c[0], c[1], c[2], r.IntN(30), v)
}

func (g *Catalogue) courseBody(id int) string {
	r := genRand(1, id, 0)
	return fmt.Sprintf(`{"id":%d,"name":%q,"type":%q,"description":"<p><strong>%s</strong>: %d hours of training, taught by working professionals.</p>"}`,
		id, genName(r), genTypes[r.IntN(3)], genName(r), 4+r.IntN(40))
}

// lists returns the 7 course lists (every combination of types) and popular.
func (g *Catalogue) lists() map[string]string {
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

// Publish writes the current documents into the local store at dir as snapshot id and
// returns the snapshot's bytes. Objects are written directly rather than through
// Local.Put, which syncs every file: 100,000 syncs would dominate the benchmark. Objects
// already there are skipped, as the builder skips them.
func (g *Catalogue) Publish(t testing.TB, dir, id string) int64 {
	t.Helper()
	g.round++
	m := snapshot.Manifest{ID: id, Header: snapshot.Header{BuiltAt: time.Now().UTC(), Today: "2027-01-01", Timezone: "UTC"},
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
		put(snapshot.ClassRoute(int64(id)), g.ClassBody(id))
	}
	m.Counts = snapshot.Counts{Courses: g.courses, Classes: len(g.classes), Documents: len(m.Documents)}
	st := store.NewLocal(dir)
	if err := snapshot.WriteManifest(context.Background(), st, &m); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.WritePointer(context.Background(), st, snapshot.Pointer{ID: id, PublishedAt: m.BuiltAt}); err != nil {
		t.Fatal(err)
	}
	return total
}

// Change renders pct percent of the classes again, spread over the whole range of ids so
// that the changes fall into every chunk, and publishes the result as snapshot id.
func (g *Catalogue) Change(t testing.TB, dir string, pct int, id string) int64 {
	for i := range g.classes {
		if (i*37)%100 < pct {
			g.classes[i]++
		}
	}
	return g.Publish(t, dir, id)
}

// Classes is the number of classes, whose ids are 1 to Classes.
func (g *Catalogue) Classes() int { return len(g.classes) }

// ProcStatus returns a memory field of /proc/self/status in bytes, or 0 where there is none.
func ProcStatus(field string) int64 {
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

// Gunzip returns the decompressed b, failing t if b is not gzip.
func Gunzip(t testing.TB, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return string(out)
}

// ChangeClasses renders the classes ids again, and the lists as every build does, and
// publishes the result as snapshot id built over base, with its delta, as a change build
// does: the delta names the classes, the lists and popular.
func (g *Catalogue) ChangeClasses(t testing.TB, dir string, ids []int, id, base string) {
	t.Helper()
	for _, c := range ids {
		g.classes[c-1]++
	}
	g.Publish(t, dir, id)
	st := store.NewLocal(dir)
	ctx := context.Background()
	m, err := snapshot.ReadManifest(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	var touched []string
	for route := range g.lists() {
		touched = append(touched, route)
	}
	for _, c := range ids {
		touched = append(touched, snapshot.ClassRoute(int64(c)))
	}
	if err := snapshot.WriteDelta(ctx, st, snapshot.NewDelta(m, base, touched)); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.WritePointer(ctx, st, snapshot.Pointer{ID: id, PublishedAt: m.BuiltAt, Base: base}); err != nil {
		t.Fatal(err)
	}
}
