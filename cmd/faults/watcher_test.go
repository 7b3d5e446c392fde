package faults

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// watcher reads one document from the edge over and over while faults happen, and records
// which snapshot each answer came from and what body it carried, so that the test can check
// afterwards that every answer was a published snapshot's own document (D27): never a
// snapshot whose publication was interrupted, never a body of another snapshot.
type watcher struct {
	url, token, route string
	client            *http.Client

	mu       sync.Mutex
	seen     map[string]map[string]int // snapshot id -> body hash -> answers
	sent     int
	failures []string // answers other than 200, and transport errors

	stop chan struct{}
	done chan struct{}
}

// watch starts reading route from the edge at base, every pause.
func watch(base, token, route string, pause time.Duration) *watcher {
	w := &watcher{
		url: base + "/api/v2" + route, token: token, route: route,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}},
		seen:   map[string]map[string]int{},
		stop:   make(chan struct{}), done: make(chan struct{}),
	}
	go w.loop(pause)
	return w
}

func (w *watcher) loop(pause time.Duration) {
	defer close(w.done)
	t := time.NewTicker(pause)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.once()
		}
	}
}

// once sends one request and records the answer.
func (w *watcher) once() {
	req, _ := http.NewRequest(http.MethodGet, w.url, nil) // the URL is well formed
	req.Header.Set("Authorization", "Bearer "+w.token)
	resp, err := w.client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sent++
	switch {
	case err != nil:
		w.failures = append(w.failures, err.Error())
	case resp.StatusCode != http.StatusOK:
		w.failures = append(w.failures, fmt.Sprintf("%s: %s", resp.Status, body))
	default:
		id := resp.Header.Get("X-Catalogue-Snapshot")
		if w.seen[id] == nil {
			w.seen[id] = map[string]int{}
		}
		w.seen[id][snapshot.Hash(body)]++
	}
}

// finish stops the watcher and returns how many requests it sent and how many failed.
func (w *watcher) finish() (sent, failed int) {
	close(w.stop)
	<-w.done
	w.client.CloseIdleConnections()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent, len(w.failures)
}

// check fails t unless every answer was 200 and came from one of the published snapshots
// with exactly the body that snapshot's manifest names for the route.
func (w *watcher) check(t testing.TB, published map[string]*snapshot.Manifest) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.failures) > 0 {
		t.Errorf("%d of %d reads of %s failed; first: %s", len(w.failures), w.sent, w.route, w.failures[0])
	}
	if len(w.seen) == 0 {
		t.Errorf("no read of %s was answered (%d sent): nothing was checked", w.route, w.sent)
	}
	ids := make([]string, 0, len(w.seen))
	for id := range w.seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := published[id]
		if m == nil {
			t.Errorf("the edge answered %s from snapshot %q, which was never published (published: %s)", w.route, id, keys(published))
			continue
		}
		want := m.Documents[w.route].Hash
		for hash, n := range w.seen[id] {
			if hash != want {
				t.Errorf("the edge answered %s from snapshot %s %d times with a body of hash %s, want %s", w.route, id, n, hash, want)
			}
		}
	}
}

func keys(m map[string]*snapshot.Manifest) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
