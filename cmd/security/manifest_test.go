package security

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestPartialManifestCannotBlankTheCatalogue: someone with write access to the store (or a
// fault) points current.json at a manifest that lists no documents, or only the routes that
// are not classes while it counts them all, or counts what it lists but lacks the popular
// list. The edge, polling every 20 ms, refuses each (issue 23, defect 1): every route of
// the real snapshot keeps its answer, /readyz stays 200 on the real snapshot, each refusal
// is counted in /metrics and logged once, and edge.cache_dir keeps the real snapshot, which
// an edge restarted without the store then serves.
func TestPartialManifestCannotBlankTheCatalogue(t *testing.T) {
	ctx := context.Background()
	cacheDir := t.TempDir()
	logs := &syncBuffer{}
	s := newSite(t, genDataset(23), siteOptions{logs: logs, edit: func(c *config.Config) {
		c.Edge.CacheDir, c.Edge.PollInterval = cacheDir, 20*time.Millisecond
	}})
	real, err := snapshot.ReadCurrent(ctx, s.store)
	if err != nil {
		t.Fatalf("ReadCurrent: %v", err)
	}
	if real.Counts.Classes == 0 {
		t.Fatalf("dataset 23 has no public class: the attack would prove nothing")
	}
	want := s.answers(t, real)

	nonClass := map[string]snapshot.Entry{}
	for r, e := range real.Documents {
		if !snapshot.IsClassRoute(r) {
			nonClass[r] = e
		}
	}
	noPopular := maps.Clone(real.Documents)
	delete(noPopular, snapshot.RoutePopular)
	noPopularCounts := real.Counts
	noPopularCounts.Documents--
	for i, evil := range []snapshot.Manifest{
		{Header: snapshot.Header{Counts: real.Counts}, Documents: map[string]snapshot.Entry{}},
		{Header: snapshot.Header{Counts: real.Counts}, Documents: nonClass},
		{Header: snapshot.Header{Counts: noPopularCounts}, Documents: noPopular},
	} {
		evil.ID, evil.BuiltAt, evil.Today, evil.Timezone = fmt.Sprintf("evil-%d", i), real.BuiltAt.Add(time.Minute), real.Today, real.Timezone
		if err := snapshot.WriteManifest(ctx, s.store, &evil); err != nil {
			t.Fatal(err)
		}
		if err := snapshot.WritePointer(ctx, s.store, snapshot.Pointer{ID: evil.ID, PublishedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
		// Until the edge refused it or served it.
		refused := fmt.Sprintf("catalogue_edge_snapshot_refused_total %d\n", i+1)
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(s.metrics(), refused) && !strings.Contains(s.get("/readyz").Body.String(), evil.ID) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: neither refused nor served within 10 s", evil.ID)
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // a few more polls of the same pointer
		s.checkAnswers(t, evil.ID, want)
		if !strings.Contains(s.metrics(), refused) {
			t.Fatalf("%s: catalogue_edge_snapshot_refused_total is not %d", evil.ID, i+1)
		}
	}
	if n := strings.Count(logs.String(), `"msg":"snapshot refused`); n != 3 {
		t.Errorf("%d log lines say a snapshot was refused, want 3 (one per manifest)", n)
	}
	if !strings.Contains(s.metrics(), "catalogue_edge_snapshot_refused_total 3\n") {
		t.Errorf("catalogue_edge_snapshot_refused_total is not 3 after more polls")
	}

	// A restart with a store that has nothing (a new bucket, or none reachable) serves the
	// cache, which still holds the real snapshot.
	s.cfg.Store = testkit.NewLocalStore(t)
	s.start(t, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	s.checkAnswers(t, "restart from edge.cache_dir", want)
}

// answers returns the status, snapshot header and body of /readyz and of every route of m
// but the course list's type variants (whose query needs escaping; the unfiltered list
// stands for them).
func (s *site) answers(t *testing.T, m *snapshot.Manifest) map[string]string {
	t.Helper()
	got := map[string]string{}
	for r := range m.Documents {
		if strings.Contains(r, "?") {
			continue
		}
		got[base+r] = ""
	}
	got["/readyz"] = ""
	for target := range got {
		rec := s.get(target)
		got[target] = fmt.Sprintf("%d %s %s", rec.Code, rec.Header().Get("X-Catalogue-Snapshot"), rec.Body)
		if rec.Code != 200 {
			t.Fatalf("GET %s before the attack: %s", target, got[target])
		}
	}
	return got
}

// checkAnswers checks that every target of want answers as it did.
func (s *site) checkAnswers(t *testing.T, when string, want map[string]string) {
	t.Helper()
	bad := 0
	for target, w := range want {
		rec := s.get(target)
		if got := fmt.Sprintf("%d %s %s", rec.Code, rec.Header().Get("X-Catalogue-Snapshot"), rec.Body); got != w && bad < 5 {
			bad++
			t.Errorf("%s: GET %s = %.200s, want %.200s", when, target, got, w)
		}
	}
}
