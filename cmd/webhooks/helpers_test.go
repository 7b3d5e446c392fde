package webhooks

import (
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestMain removes the binaries the tests built (cmdtest.Binaries).
func TestMain(m *testing.M) { cmdtest.Main(m) }

// catalogue: course 1 with class 11, far in the future so that "today" does not matter.
const catalogue = `
INSERT INTO courses (id, name, type, description, is_public) VALUES (1, 'Welding', 'Online', NULL, TRUE);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES (11, 1, '2099-05-03', '2099-05-07', 2500, TRUE);
`

// install returns a migrated installation holding catalogue, publishing into a folder,
// whose builder serve builds on changes only and accepts loopback http endpoints.
func install(t *testing.T, extra map[string]string) *cmdtest.Env {
	t.Helper()
	e := cmdtest.NewEnv(t, testkit.NewLocalStore(t))
	e.Extra[config.EnvName("builder.schedule")] = "@every 1h"
	e.Extra[config.EnvName("edge.rate_limit")] = "1000000"
	e.Extra[config.EnvName("webhooks.allow_http")] = "true"
	e.Extra[config.EnvName("webhooks.allow_private")] = "true"
	for k, v := range extra {
		e.Extra[config.EnvName(k)] = v
	}
	e.Exec(t, catalogue)
	return e
}

// redisURL is the test Redis the edges share.
func redisURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("CATALOGUE_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CATALOGUE_TEST_REQUIRE") != "" {
			t.Fatal("CATALOGUE_TEST_REDIS_URL is not set: make test starts Redis and sets it")
		}
		t.Skip("CATALOGUE_TEST_REDIS_URL is not set")
	}
	return u
}

// receiver is a partner's endpoint: it verifies every delivery with the Standard Webhooks
// reference library, then calls onReceipt (reads through the edges) before answering.
type receiver struct {
	secret    string
	onReceipt func(body []byte)
	answer    func(n int, w http.ResponseWriter, r *http.Request) // nil: 200
	mu        sync.Mutex
	got       []delivery
	arrived   chan struct{}
}

type delivery struct {
	id        string
	body      []byte
	verifyErr error
}

func newReceiver() *receiver { return &receiver{arrived: make(chan struct{}, 100)} }

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	secret := rc.secret
	n := len(rc.got)
	rc.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err == nil {
		err = wh.Verify(body, r.Header)
	}
	if err == nil && rc.onReceipt != nil {
		rc.onReceipt(body)
	}
	rc.mu.Lock()
	rc.got = append(rc.got, delivery{id: r.Header.Get("webhook-id"), body: body, verifyErr: err})
	rc.mu.Unlock()
	select {
	case rc.arrived <- struct{}{}:
	default:
	}
	if rc.answer != nil {
		rc.answer(n, w, r)
	}
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// add registers the receiver at url with builder webhook add and keeps its secret.
func (rc *receiver) add(t *testing.T, e *cmdtest.Env, url string) {
	t.Helper()
	out := e.MustBuilder(t, "webhook", "add", "--url", url)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	rc.mu.Lock()
	rc.secret = lines[len(lines)-1]
	rc.mu.Unlock()
}
