package edge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/edge/docstore"
	"github.com/trainingco/catalogue/edge/docstore/docstoretest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// markedFixture is a snapshot whose every document names the snapshot, so that a response
// whose header and body come from different snapshots shows.
func markedFixture(id string) fixture {
	f := fixture{id: id, docs: map[string]string{}}
	for _, route := range raceRoutes {
		f.docs[route] = fmt.Sprintf(`{"route":%q,"snapshot":%q,"padding":%q}`, route, id, strings.Repeat(id, 50))
	}
	return f
}

var raceRoutes = []string{"/public/courses", "/public/courses?type=Online", "/public/popular",
	"/public/course/1", "/public/course/2", "/public/class/1", "/public/class/2"}

// markedBodies are the documents of the test's snapshots, by id and route.
var markedBodies = map[string]map[string]string{}

func init() {
	for _, id := range []string{"snap-0", "snap-1", "snap-2", "snap-3"} {
		markedBodies[id] = markedFixture(id).docs
	}
}

var raceTargets = []string{"/public/courses", "/public/courses?type[]=Online", "/public/popular",
	"/public/course/1", "/public/course/2", "/public/class/1", "/public/class/2"}

// TestSwapUnderLoad swaps snapshots over and over while readers hammer the server: every
// answer must be whole and from one snapshot, the one its X-Catalogue-Snapshot names, with
// the ETag of the body it carries. Swaps come first from the store through refresh, as in
// production, then back to back from snapshots already in memory, so that they are frequent
// enough to land between any two steps of a request.
func TestSwapUnderLoad(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, testkit.NewLocalStore(t))
	ids := []string{"snap-0", "snap-1", "snap-2", "snap-3"}
	var loaded []*docstore.Snapshot
	for _, id := range ids[1:] {
		publish(t, st, markedFixture(id))
		m, err := snapshot.ReadCurrent(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		s, err := docstore.Load(ctx, st, m)
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, s)
	}
	ts := startOn(t, st, markedFixture(ids[0])) // published last, so the pointer names it
	loaded = append(loaded, ts.docs.Current())

	var served atomic.Int64
	stop := hammer(t, ts, &served)
	for i := 1; i <= 20; i++ {
		putJSON(t, st, snapshot.PointerKey, snapshot.Pointer{ID: ids[i%len(ids)]})
		refresh(t, ts.Server)
	}
	for i := 0; served.Load() < 20000; i++ {
		ts.docs.Swap(loaded[i%len(loaded)])
	}
	stop()
}

// hammer starts readers that check every answer until the returned stop is called, which
// waits for them and reports what they found.
func hammer(t *testing.T, ts testServer, served *atomic.Int64) (stop func()) {
	var halt atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !halt.Load() {
				i := rand.IntN(len(raceTargets))
				if msg := checkMarked(t, ts, raceTargets[i], raceRoutes[i], rand.IntN(2) == 0); msg != "" {
					select {
					case errs <- msg:
					default: // enough is known already
					}
				}
				served.Add(1)
			}
		}()
	}
	return func() {
		halt.Store(true)
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Error(msg)
		}
	}
}

// checkMarked sends one request and returns what is wrong with its answer, or "".
func checkMarked(t *testing.T, ts testServer, target, route string, gz bool) string {
	hdr := map[string]string{}
	if gz {
		hdr["Accept-Encoding"] = "gzip"
	}
	got := ts.get("GET", "/api/v2"+target, hdr, "X-Catalogue-Snapshot", "ETag", "Content-Length")
	if got.Status != 200 {
		return fmt.Sprintf("GET %s: status %d, body %q", target, got.Status, got.Body)
	}
	body := got.Body
	if gz {
		body = docstoretest.Gunzip(t, []byte(got.Body))
	}
	id := got.Headers["X-Catalogue-Snapshot"]
	want := markedBodies[id][route]
	wantTag := `"` + snapshot.Hash([]byte(want)) + `"`
	if gz {
		wantTag = `"` + snapshot.Hash([]byte(want)) + `-gz"`
	}
	if body != want || got.Headers["ETag"] != wantTag || got.Headers["Content-Length"] != fmt.Sprint(len(got.Body)) {
		return fmt.Sprintf("GET %s (gzip %v) answered by snapshot %q: body %q, ETag %s, Content-Length %s; want body %q, ETag %s",
			target, gz, id, body, got.Headers["ETag"], got.Headers["Content-Length"], want, wantTag)
	}
	return ""
}
