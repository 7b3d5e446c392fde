package e2e

import (
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
)

// testRebuild changes the data, builds again, and checks that the edge serves the new
// snapshot after its next poll (edge.poll_interval is 200ms here), whole (D27).
func (f *fixture) testRebuild(t *testing.T) {
	change := map[string]string{
		"reference": `UPDATE courses SET name = 'Zoology Advanced' WHERE id = 10;
UPDATE courses SET is_public = false WHERE id = 16;`,
		// The example's course 16 is soft-deleted rather than unpublished.
		"laravel": `UPDATE courses SET title = 'Zoology Advanced' WHERE id = 10;
UPDATE courses SET deleted_at = now() WHERE id = 16;`,
	}
	f.env.Exec(t, change[f.schema.Name])
	next := f.env.Run(t)
	if next == f.snapshot {
		t.Fatalf("builder run after a change published snapshot %s again", next)
	}
	f.edge.WaitSnapshot(t, next, readyWithin)

	r := f.get(t, "/public/course/10")
	if got := r.Header.Get("X-Catalogue-Snapshot"); got != next {
		t.Errorf("GET /public/course/10: X-Catalogue-Snapshot %q, want the new %q", got, next)
	}
	f.wantJSON(t, r, `{"id": 10, "name": "Zoology Advanced", "type": "Brick and Mortar", "description": "<p>Animals &amp; <b>habitats</b></p>"}`)
	f.wantJSON(t, f.get(t, "/public/popular"), `[
		{"id": 10, "name": "Zoology Advanced", "upcoming_class": {"id": 100, "cost": 500, "start": "@+10", "end": "@+12", "available_seats": 6}},
		{"id": 13, "name": "Algebra 100%", "upcoming_class": {"id": 131, "cost": 120, "start": "@+1", "end": "@+30", "available_seats": 0}},
		{"id": 11, "name": "art history", "upcoming_class": null}
	]`)
	// Course 16 is no longer public: gone from its own route and from the list.
	wantError(t, f.get(t, "/public/course/16"), http.StatusNotFound, "")
	f.wantJSON(t, f.get(t, "/public/courses?type="+strings.ReplaceAll("Brick and Mortar", " ", "+")), `{"data": [
		{"id": 12, "name": "Biology_Lab", "upcoming_class": `+upBiology+`},
		{"id": 10, "name": "Zoology Advanced", "upcoming_class": `+upZoology+`}
	]}`)
	// The live search reads the database, so it changed at once.
	f.wantJSON(t, f.get(t, "/public/classes?search=advanced"), page([]string{
		strings.Replace(item[100], `"Zoology"`, `"Zoology Advanced"`, 1),
		strings.Replace(item[101], `"Zoology"`, `"Zoology Advanced"`, 1),
		strings.Replace(item[103], `"Zoology"`, `"Zoology Advanced"`, 1),
	}, 3, 1))
}

// testNotReady starts an edge on a store where nothing is published yet (for MinIO, a
// bucket that does not exist yet): it is alive but not ready, answers the static routes
// 503, and serves the first snapshot published after its next poll (D26).
func (f *fixture) testNotReady(t *testing.T) {
	env := &cmdtest.Env{DatabaseURL: f.env.DatabaseURL, Store: f.emptyStore(), Extra: maps.Clone(f.env.Extra)}
	d := env.StartEdge(t, map[string]string{"CATALOGUE_EDGE_POLL_INTERVAL": "200ms"})
	if r := checked(t, d.Get(t, "/healthz", "")); r.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz before any snapshot: %s, want 200", r.Status)
	}
	wantError(t, checked(t, d.Get(t, "/readyz", "")), http.StatusServiceUnavailable, "")
	r := checked(t, d.Get(t, base+"/public/course/10", f.token))
	wantError(t, r, http.StatusServiceUnavailable, "")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("GET /public/course/10 before any snapshot: 503 without Retry-After")
	}

	id := env.Run(t)
	d.WaitSnapshot(t, id, readyWithin)
	r = checked(t, d.Get(t, base+"/public/course/10", f.token))
	if r.StatusCode != http.StatusOK || r.Header.Get("X-Catalogue-Snapshot") != id {
		t.Errorf("GET /public/course/10 after the first build: %s, snapshot %q; want 200, %q", r.Status, r.Header.Get("X-Catalogue-Snapshot"), id)
	}
}

// testGracefulShutdown sends SIGTERM to an edge while searches are in flight: each gets its
// whole answer, and the edge exits 0.
func (f *fixture) testGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "search.sql"), []byte(cmdtest.SlowSearch), 0o600); err != nil {
		t.Fatal(err)
	}
	d := f.env.StartEdge(t, map[string]string{
		"CATALOGUE_TEMPLATES_DIR":       dir,
		"CATALOGUE_EDGE_SEARCH_TIMEOUT": "20s",
		"CATALOGUE_EDGE_SEARCH_CACHE":   "0",     // four queries in flight, not one shared
		"CATALOGUE_EDGE_SEARCH_INDEX":   "false", // each a run of the slow search.sql
	})
	d.WaitSnapshot(t, f.snapshot, readyWithin)

	const inFlight = 4
	wait := cmdtest.SearchesInFlight(d.URL+base+"/public/classes", f.token, inFlight)
	cmdtest.WaitSleeping(t, f.env.DatabaseURL, inFlight)
	d.Signal(t, syscall.SIGTERM)
	want := f.expand(page(items(150), 1, 1))
	for _, r := range wait() {
		if r.Err != nil || r.Status != http.StatusOK {
			t.Errorf("search in flight at SIGTERM: status %d, error %v, want 200\n%s", r.Status, r.Err, r.Body)
			continue
		}
		if diff := jsonDiff(t, want, r.Body); diff != "" {
			t.Errorf("search in flight at SIGTERM mismatch (-want +got):\n%s", diff)
		}
	}
	if err := d.Wait(t, 20*time.Second); err != nil {
		t.Errorf("edge after SIGTERM: %v, want exit 0\nlogs:\n%s", err, d.Logs())
	}
}
