package main

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// need skips the test without the test services (whose programs it runs), unless
// CATALOGUE_TEST_REQUIRE=1 (make test) says that it must run.
func need(t *testing.T) {
	if os.Getenv("CATALOGUE_TEST_PG_URL") == "" && os.Getenv("CATALOGUE_TEST_REQUIRE") == "" {
		t.Skip("CATALOGUE_TEST_PG_URL is not set; run make test to start the real services")
	}
}

// TestStartAndStop runs `services start DIR` as make services does: it prints the export
// lines of /tmp/services.env, each service answers at its URL, the standby is in recovery;
// `services stop DIR` (make services-stop) leaves none of them listening.
func TestStartAndStop(t *testing.T) {
	need(t)
	t.Parallel()
	tmp := t.TempDir()
	// PostgreSQL, run as the user postgres when we are root, must reach dir: t.TempDir's folders are 0700.
	for _, d := range []string{tmp, filepath.Dir(tmp)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(tmp, "services")
	var out strings.Builder
	if code, err := run([]string{"start", dir}, &out); code != 0 || err != nil {
		t.Fatalf("services start: exit %d, %v", code, err)
	}
	t.Cleanup(func() { _, _ = run([]string{"stop", dir}, &strings.Builder{}) })
	env := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^export ([A-Z0-9_]+)='([^']*)'$`).FindAllStringSubmatch(out.String(), -1) {
		env[m[1]] = m[2]
	}
	for _, name := range []string{"CATALOGUE_TEST_PG_URL", "CATALOGUE_TEST_STANDBY_URL", "CATALOGUE_TEST_S3_ENDPOINT",
		"CATALOGUE_TEST_REDIS_URL", "CATALOGUE_TEST_CHROMIUM", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		if env[name] == "" {
			t.Errorf("services start printed no export of %s:\n%s", name, out.String())
		}
	}
	if env["CATALOGUE_TEST_REQUIRE"] != "1" || !strings.Contains(out.String(), "\nunset AWS_SESSION_TOKEN AWS_PROFILE\n") {
		t.Errorf("services start: want CATALOGUE_TEST_REQUIRE='1' and the unset line:\n%s", out.String())
	}
	if t.Failed() {
		return
	}
	var inRecovery bool
	if err := queryRow(env["CATALOGUE_TEST_PG_URL"], "SELECT pg_is_in_recovery()", &inRecovery); err != nil || inRecovery {
		t.Errorf("primary: pg_is_in_recovery() = %v, %v; want false", inRecovery, err)
	}
	if err := queryRow(env["CATALOGUE_TEST_STANDBY_URL"], "SELECT pg_is_in_recovery()", &inRecovery); err != nil || !inRecovery {
		t.Errorf("standby: pg_is_in_recovery() = %v, %v; want true", inRecovery, err)
	}
	if resp, err := http.Get(env["CATALOGUE_TEST_S3_ENDPOINT"] + "/minio/health/live"); err != nil || resp.StatusCode != 200 {
		t.Errorf("MinIO's liveness probe: %v, %v", resp, err)
	}
	listening(t, env["CATALOGUE_TEST_REDIS_URL"], true)

	if code, err := run([]string{"stop", dir}, &strings.Builder{}); code != 0 || err != nil {
		t.Fatalf("services stop: exit %d, %v", code, err)
	}
	for _, name := range []string{"CATALOGUE_TEST_PG_URL", "CATALOGUE_TEST_STANDBY_URL", "CATALOGUE_TEST_S3_ENDPOINT", "CATALOGUE_TEST_REDIS_URL"} {
		listening(t, env[name], false)
	}
}

// TestRunExitsWithTheCommandsStatus runs a command under `services run` (scripts/test.sh):
// it sees the variables, its exit status is the run's, and the services are stopped after.
func TestRunExitsWithTheCommandsStatus(t *testing.T) {
	need(t)
	t.Parallel()
	seen := filepath.Join(t.TempDir(), "seen")
	code, err := run([]string{"run", "sh", "-c", `echo "$CATALOGUE_TEST_REDIS_URL $CATALOGUE_TEST_REQUIRE" >` + seen + `; exit 3`}, &strings.Builder{})
	if code != 3 || err != nil {
		t.Errorf("services run: exit %d, %v; want 3, nil", code, err)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	redisURL, require, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !strings.HasPrefix(redisURL, "redis://127.0.0.1:") || require != "1" {
		t.Fatalf("the command saw CATALOGUE_TEST_REDIS_URL %q, CATALOGUE_TEST_REQUIRE %q", redisURL, require)
	}
	listening(t, redisURL, false)
}

// listening checks whether something accepts connections at rawURL's host and port.
func listening(t *testing.T, rawURL string, want bool) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err == nil {
		c.Close()
	}
	if got := err == nil; got != want {
		t.Errorf("%s accepting connections: %v, want %v", rawURL, got, want)
	}
}

func queryRow(dbURL, sql string, dest any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest)
}
