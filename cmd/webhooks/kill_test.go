package webhooks

import (
	"encoding/json"
	"github.com/trainingco/catalogue/scripts/testkit"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// TestKilledBuilderDeliversAfterRestart: builder serve is killed with SIGKILL while a
// delivery is in flight and two more are queued behind it; once it runs again, River
// rescues the abandoned job (webhooks.stuck_after) and every message is delivered, in
// order, the interrupted one with its webhook-id of before.
func TestKilledBuilderDeliversAfterRestart(t *testing.T) {
	e := install(t, map[string]string{"webhooks.stuck_after": "10s", "webhooks.timeout": "8s",
		"webhooks.retry_base": "100ms", "webhooks.retry_max": "200ms"})
	rc := newReceiver()
	inFlight := make(chan struct{})
	rc.answer = func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 { // the first delivery hangs until its builder dies
			close(inFlight)
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	rc.add(t, e, srv.URL+"/hooks")

	serve := e.StartServe(t, nil)
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatalf("no delivery within 30 s\nlogs:\n%s", serve.Logs())
	}
	for i, cost := range []string{"2600", "2700"} {
		e.Exec(t, "UPDATE classes SET cost = "+cost+" WHERE id = 11")
		serve.WaitLog(t, "webhooks queued", i+2, 30*time.Second, nil)
	}
	queued := serve.WaitLog(t, "webhooks queued", 3, time.Second, nil)
	var want []string
	for _, l := range queued {
		want = append(want, l["webhook_id"].(string))
	}
	if n := len(rc.deliveries()); n != 1 {
		t.Fatalf("%d deliveries before the kill, want the one in flight alone", n)
	}
	if err := serve.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = serve.Stop() // reaps the killed process

	again := e.StartServe(t, nil)
	testkit.WaitFor(t, 60*time.Second, "the three messages after the restart", func() bool {
		var ids []string
		for _, d := range rc.deliveries() {
			if !slices.Contains(ids, d.id) {
				ids = append(ids, d.id)
			}
		}
		return len(ids) == 3
	})
	var got []string
	for _, d := range rc.deliveries() {
		if d.verifyErr != nil {
			t.Errorf("a delivery does not verify: %v", d.verifyErr)
		}
		if len(got) == 0 || got[len(got)-1] != d.id {
			got = append(got, d.id)
		}
	}
	// The interrupted message came twice (before the kill and after), then the other two.
	if !slices.Equal(got, want) {
		t.Errorf("deliveries by webhook-id %v, want %v: each message, in order, the interrupted one again first\nlogs after the restart:\n%s", got, want, again.Logs())
	}
	if n := len(rc.deliveries()); n != 4 {
		t.Errorf("%d deliveries, want 4: the interrupted one twice, the two others once", n)
	}
	var c changed
	_ = json.Unmarshal(rc.deliveries()[3].body, &c)
	if !slices.Equal(c.Data.Classes, []int64{11}) {
		t.Errorf("the last delivery %s, want class 11 changed", rc.deliveries()[3].body)
	}
}
