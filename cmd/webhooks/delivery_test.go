package webhooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// changed is catalogue.changed as a partner decodes it (D41).
type changed struct {
	Type string `json:"type"`
	Data struct {
		Snapshot string  `json:"snapshot"`
		Courses  []int64 `json:"courses"`
		Classes  []int64 `json:"classes"`
		Feeds    struct {
			Courses string `json:"courses"`
			Classes string `json:"classes"`
		} `json:"feeds"`
	} `json:"data"`
}

// classCost reads class 11's cost through the edge at base, as a partner would.
func classCost(base, token string) (float64, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/api/v2/public/class/11", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d, snapshot %s", resp.StatusCode, resp.Header.Get("X-Catalogue-Snapshot"))
	}
	var doc struct {
		Cost float64 `json:"cost"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	return doc.Cost, err
}

// TestDeliveredOnceEveryEdgeServes (D40-D42): two edges share a Redis, one polling the store
// every 100 ms and one every 2 s. A committed change is delivered, signed as Standard
// Webhooks says, and the receiver, reading class 11 through both edges the moment the
// delivery arrives, already sees the change on both.
func TestDeliveredOnceEveryEdgeServes(t *testing.T) {
	e := install(t, map[string]string{"edge.redis_url": redisURL(t)})
	token := e.Token(t, "partner")
	rc := newReceiver()
	var mu sync.Mutex
	var edges []*cmdtest.Edge
	seen := map[string][]float64{} // snapshot -> class 11's cost on each edge at receipt
	rc.onReceipt = func(body []byte) {
		var c changed
		_ = json.Unmarshal(body, &c)
		var costs []float64
		mu.Lock()
		reading := edges
		mu.Unlock()
		for _, d := range reading {
			cost, err := classCost(d.URL, token)
			if err != nil {
				t.Logf("read through %s: %v", d.URL, err)
				cost = -1
			}
			costs = append(costs, cost)
		}
		mu.Lock()
		seen[c.Data.Snapshot] = costs
		mu.Unlock()
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	rc.add(t, e, srv.URL+"/hooks")

	serve := e.StartServe(t, nil)
	// The first publication announces every course and class (all are new to a partner).
	testkit.WaitFor(t, 30*time.Second, "the first publication's delivery", func() bool { return len(rc.deliveries()) == 1 })
	var first changed
	if err := json.Unmarshal(rc.deliveries()[0].body, &first); err != nil {
		t.Fatal(err)
	}
	started := []*cmdtest.Edge{
		e.StartEdge(t, map[string]string{config.EnvName("edge.poll_interval"): "100ms"}),
		e.StartEdge(t, map[string]string{config.EnvName("edge.poll_interval"): "2s"}),
	}
	for _, d := range started {
		d.WaitSnapshot(t, first.Data.Snapshot, 30*time.Second)
	}
	mu.Lock()
	edges = started
	mu.Unlock()
	e.Exec(t, "UPDATE classes SET cost = 2600 WHERE id = 11")
	testkit.WaitFor(t, 30*time.Second, "the change's delivery", func() bool { return len(rc.deliveries()) == 2 })

	for i, d := range rc.deliveries() {
		if d.verifyErr != nil {
			t.Errorf("delivery %d does not verify with the Standard Webhooks reference library: %v", i, d.verifyErr)
		}
	}
	var c changed
	if err := json.Unmarshal(rc.deliveries()[1].body, &c); err != nil {
		t.Fatal(err)
	}
	if c.Type != "catalogue.changed" || !slices.Equal(c.Data.Classes, []int64{11}) || !slices.Equal(c.Data.Courses, []int64{}) {
		t.Errorf("the change's delivery = %s, want catalogue.changed naming class 11 and no course", rc.deliveries()[1].body)
	}
	rc.mu.Lock()
	secret := rc.secret
	rc.mu.Unlock()
	if key := secret[len("whsec_"):]; strings.Contains(serve.Logs(), key) {
		t.Error("builder serve logged the endpoint's secret")
	}
	mu.Lock()
	costs := seen[c.Data.Snapshot]
	mu.Unlock()
	if !slices.Equal(costs, []float64{2600, 2600}) {
		t.Errorf("at the delivery's arrival class 11 cost %v on the two edges, want 2600 on both (D42)\nserve logs:\n%s", costs, serve.Logs())
	}
}
