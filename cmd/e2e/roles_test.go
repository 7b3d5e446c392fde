package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestOperationsRoles runs config/OPERATIONS.md's example of the roles (its sql block) as an
// operator would after builder migrate, then each part as its role: builder run as the
// builder's, publishing a change and queueing its webhook message; builder migrate again;
// then an edge as the edge's, reading a class and searching. Followed as written, the
// builder queued no message (no USAGE on river_job_id_seq) and the next migrate took the
// views' grants away (found by an operator's review).
func TestOperationsRoles(t *testing.T) {
	env := cmdtest.NewEnv(t, testkit.NewLocalStore(t))
	env.Extra["CATALOGUE_WEBHOOKS_ALLOW_HTTP"] = "true"
	env.Extra["CATALOGUE_WEBHOOKS_ALLOW_PRIVATE"] = "true"
	env.MustBuilder(t, "seed", "--courses", "5", "--classes", "40", "--registrations", "50", "--seed", "1")
	token := env.Token(t, "roles")
	env.MustBuilder(t, "webhook", "add", "--url", "http://127.0.0.1:9/hook")
	builderRole, edgeRole := exampleRoles(t, env)

	asBuilder := &cmdtest.Env{DatabaseURL: asRole(t, env.DatabaseURL, builderRole), Store: env.Store, Extra: env.Extra}
	asBuilder.Run(t)
	env.Exec(t, "UPDATE classes SET cost = cost + 1 WHERE is_public")
	asBuilder.Run(t) // fails the test when its message could not be queued
	if queued := scalar(t, env.DatabaseURL, "SELECT count(*) FROM webhook_deliveries"); queued == 0 {
		t.Errorf("builder run as %s published a change and queued no webhook message", builderRole)
	}

	env.MustBuilder(t, "migrate")
	asEdge := &cmdtest.Env{DatabaseURL: asRole(t, env.DatabaseURL, edgeRole), Store: env.Store, Extra: env.Extra}
	edge := asEdge.StartEdge(t, nil)
	class := scalar(t, env.DatabaseURL, "SELECT min(id) FROM catalogue_classes WHERE is_public")
	for _, path := range []string{fmt.Sprintf("/public/class/%d", class), "/public/classes"} {
		if r := edge.Get(t, base+path, token); r.StatusCode != http.StatusOK {
			t.Errorf("GET %s from an edge as %s after a second migrate: %s %s; want 200", path, edgeRole, r.Status, r.Data)
		}
	}
}

// exampleRoles applies OPERATIONS.md's sql block to env's database, its roles renamed for
// this test (roles belong to the whole cluster) and dropped after it, and returns the
// builder's role and the edge's.
func exampleRoles(t *testing.T, env *cmdtest.Env) (builder, edge string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "config", "OPERATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```sql\n(.*?)```").FindStringSubmatch(string(doc))
	if block == nil || !strings.Contains(block[1], "catalogue_builder") || !strings.Contains(block[1], "catalogue_edge") {
		t.Fatal("config/OPERATIONS.md has no sql block creating catalogue_builder and catalogue_edge")
	}
	suffix := fmt.Sprintf("_%d", time.Now().UnixNano())
	builder, edge = "catalogue_builder"+suffix, "catalogue_edge"+suffix
	sql := strings.NewReplacer("catalogue_builder", builder, "catalogue_edge", edge, " PASSWORD '…'", "").Replace(block[1])
	env.Exec(t, sql) // one transaction: a failure leaves no role behind
	t.Cleanup(func() {
		testkit.Exec(t, env.DatabaseURL, fmt.Sprintf("DROP OWNED BY %s, %s; DROP ROLE %s, %s", builder, edge, builder, edge))
	})
	return builder, edge
}

// asRole returns dbURL with role as its user (the test cluster trusts its local users).
func asRole(t *testing.T, dbURL, role string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}

// scalar returns the one integer query answers on dbURL.
func scalar(t *testing.T, dbURL, query string) int64 {
	t.Helper()
	var n int64
	if err := testkit.Connect(t, dbURL).QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
