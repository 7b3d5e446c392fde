package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/scripts/testkit/services"
)

// TestContainer runs the image as an operator would: make image's script builds it (twice:
// the same image ID both times), then containers of it with a read-only root filesystem and
// no capabilities, on the host network, run builder migrate and token create against the test PostgreSQL, builder
// serve publishes to the test MinIO, and the edge, configured through CATALOGUE_* variables
// and a mounted file, with its cache on a volume, serves a course; docker stop (SIGTERM) then
// lets the searches in flight finish and the edge exit 0 well within its grace period.
//
// It needs a Docker engine: under CATALOGUE_TEST_REQUIRE=1 (make test) scripts/image/docker.sh
// installs and starts one (as root) or the test fails saying what is missing; otherwise the
// test is skipped when no engine answers.
func TestContainer(t *testing.T) {
	requireDocker(t)
	db := testkit.NewDatabase(t)
	st := testkit.NewS3Store(t)

	image := buildImage(t)
	env := []string{
		"CATALOGUE_DATABASE_URL=" + db,
		"CATALOGUE_STORE_URL=" + st.URL,
		"CATALOGUE_STORE_ENDPOINT=" + st.Endpoint,
		"CATALOGUE_STORE_REGION=" + st.Region,
		"AWS_ACCESS_KEY_ID=" + os.Getenv("AWS_ACCESS_KEY_ID"),
		"AWS_SECRET_ACCESS_KEY=" + os.Getenv("AWS_SECRET_ACCESS_KEY"),
	}
	envFile := filepath.Join(t.TempDir(), "catalogue.env")
	if err := os.WriteFile(envFile, []byte(strings.Join(env, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Every container: read-only root, no capabilities, host network (the services listen on
	// the loopback), configuration from the environment file.
	run := []string{"run", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--network", "host", "--env-file", envFile}

	mustDocker(t, append(run, "--rm", image, "builder", "migrate")...)
	testkit.Exec(t, db, `INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Shipping in containers', 'Online', 'Scratch images, read-only.', true);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES
  (150, 1, CURRENT_DATE + 30, CURRENT_DATE + 31, 500, true)`)
	out := mustDocker(t, append(run, "--rm", image, "builder", "token", "create", "--name", "container")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]

	// The containers share the host's network, so they cannot be told to take port 0 and
	// report it as the tests' edges do.
	metrics := strconv.Itoa(services.Port(t))
	builder := startContainer(t, append(run, "-e", "CATALOGUE_BUILDER_METRICS_LISTEN=127.0.0.1:"+metrics,
		image, "builder", "serve")...)

	port := strconv.Itoa(services.Port(t))
	conf := t.TempDir()
	writeFile(t, filepath.Join(conf, "catalogue.yaml"), fmt.Sprintf(edgeConfig, port))
	writeFile(t, filepath.Join(conf, "templates", "search.sql"), cmdtest.SlowSearch)
	volume := "catalogue-test-cache-" + randomHex(4)
	t.Cleanup(func() { _, _ = docker(context.Background(), "volume", "rm", "-f", volume) })
	edge := startContainer(t, append(run, "--stop-timeout", "30",
		"-v", conf+":/etc/catalogue:ro", "-v", volume+":/var/cache/catalogue",
		image, "edge", "--config", "/etc/catalogue/catalogue.yaml")...)

	base := "http://127.0.0.1:" + port
	waitReady(t, base, edge)
	status, body := get(t, base+"/api/v2/public/course/1", token)
	var course struct {
		ID                      any
		Name, Type, Description string
	}
	if err := json.Unmarshal([]byte(body), &course); status != http.StatusOK || err != nil ||
		fmt.Sprint(course.ID) != "1" || course.Name != "Shipping in containers" || course.Type != "Online" ||
		course.Description != "Scratch images, read-only." {
		t.Fatalf("GET /public/course/1 through the container: %d %s, want 200 with course 1 as inserted", status, body)
	}

	// Docker's HEALTHCHECK command, as docker runs it: beside PID 1, with its environment.
	for _, c := range []string{edge, builder} {
		if out, err := docker(t.Context(), "exec", c, "/usr/local/bin/catalogue", "healthcheck"); err != nil ||
			!strings.Contains(out, ": ok") {
			t.Errorf("healthcheck in %s: %v\n%s", c, err, out)
		}
	}

	drains(t, base, token, db, edge)
	cacheWritten(t, image, volume)
	for _, c := range []string{builder} {
		if out, err := docker(t.Context(), "stop", "-t", "60", c); err != nil {
			t.Errorf("docker stop %s: %v\n%s", c, err, out)
		}
		if code := exitCode(t, c); code != "0" {
			t.Errorf("builder serve after SIGTERM: exit %s, want 0\n%s", code, logs(c))
		}
	}
}

// drains sends SIGTERM (docker stop) to the edge container while searches are in flight
// (each held 1.5 s by the mounted search.sql): each must get its whole answer, and the edge
// exit 0 long before docker's grace period (30 s) would have it killed.
func drains(t *testing.T, base, token, db, edge string) {
	const inFlight = 3
	wait := cmdtest.SearchesInFlight(base+"/api/v2/public/classes", token, inFlight)
	cmdtest.WaitSleeping(t, db, inFlight)
	start := time.Now()
	if out, err := docker(t.Context(), "stop", "-t", "30", edge); err != nil {
		t.Fatalf("docker stop %s: %v\n%s", edge, err, out)
	}
	took := time.Since(start)
	for _, r := range wait() {
		if r.Err != nil || r.Status != http.StatusOK || !strings.Contains(r.Body, `"total":1`) {
			t.Errorf("search in flight at SIGTERM: status %d, error %v, want 200 with class 150\n%s", r.Status, r.Err, r.Body)
		}
	}
	// The edge gives its requests 20 s; past docker's 30 s it would have been killed (137).
	if code := exitCode(t, edge); code != "0" || took >= 25*time.Second {
		t.Errorf("edge after SIGTERM: exit %s after %v, want 0 within its 20 s grace\n%s", code, took, logs(edge))
	}
	t.Logf("edge drained %d searches and exited in %v", inFlight, took.Round(10*time.Millisecond))
}

// cacheWritten checks that the edge kept its snapshot in its cache, on the volume: the one
// place it may write with a read-only root filesystem. The volume is read through the engine
// (docker cp of a container that mounts it, never started), as the host's copy of it is
// private to the image's user and readable by root only.
func cacheWritten(t *testing.T, image, volume string) {
	t.Helper()
	id := strings.TrimSpace(mustDocker(t, "create", "-v", volume+":/cache", image))
	defer mustDocker(t, "rm", id)
	out, err := exec.CommandContext(t.Context(), "docker", "cp", id+":/cache", "-").Output()
	if err != nil {
		t.Fatalf("docker cp of the edge's cache volume %s: %v", volume, err)
	}
	var files int
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the cache volume's archive: %v", err)
		}
		if h.Typeflag == tar.TypeReg {
			files++
		}
	}
	if files == 0 {
		t.Errorf("the edge's cache volume %s holds no file, want the snapshot it loaded", volume)
	}
}

// edgeConfig is the edge's mounted configuration file; %s is its port. The database and the
// store come from the environment. edge.cache_dir is the image's (its volume), not set here:
// the docs said the image sets it, and it did not.
const edgeConfig = `templates:
  dir: /etc/catalogue/templates
edge:
  listen: 127.0.0.1:%s
  poll_interval: 200ms
  search_timeout: 20s
  search_cache: 0s
  search_index: false
`

// requireDocker makes sure a Docker engine answers: under CATALOGUE_TEST_REQUIRE it runs
// scripts/image/docker.sh (install, start), failing with what it says; otherwise it skips
// when no engine answers.
func requireDocker(t *testing.T) {
	t.Helper()
	if os.Getenv("CATALOGUE_TEST_REQUIRE") == "" {
		if _, err := docker(t.Context(), "info"); err != nil {
			t.Skipf("no Docker engine answers (docker info: %v); make test installs and starts one", err)
		}
		return
	}
	cmd := exec.CommandContext(t.Context(), "../../scripts/image/docker.sh")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the container test needs a Docker engine: scripts/image/docker.sh: %v\n%s", err, out)
	}
}

// imageID is the line of scripts/image/build.sh's report that gives the image's ID.
var imageID = regexp.MustCompile(`(?m)^\s+id\s+(sha256:[0-9a-f]{64})$`)

// maxImageSize is the image's size target, in bytes as docker image inspect reports it.
const maxImageSize = 30e6

// buildImage builds the image twice with make image's script under a tag of its own and
// returns its name; both builds must give the same ID, and the image must be within its size.
func buildImage(t *testing.T) string {
	t.Helper()
	version := "test-" + randomHex(4)
	name := "catalogue-test"
	image := name + ":" + version
	t.Cleanup(func() {
		_, _ = docker(context.Background(), "rmi", name+":"+version, name+":latest")
	})
	var ids []string
	for i := range 2 {
		cmd := exec.CommandContext(t.Context(), "../../scripts/image/build.sh")
		cmd.Env = append(os.Environ(), "IMAGE_NAME="+name, "VERSION="+version,
			"IMAGE_ARCHIVE="+filepath.Join(t.TempDir(), "image.tar"))
		out, err := cmd.CombinedOutput()
		m := imageID.FindStringSubmatch(string(out))
		if err != nil || m == nil {
			t.Fatalf("scripts/image/build.sh (build %d): %v\n%s", i+1, err, out)
		}
		ids = append(ids, m[1])
	}
	if ids[0] != ids[1] {
		t.Errorf("two builds of the same tree: image IDs %s and %s, want one", ids[0], ids[1])
	}
	inspect := mustDocker(t, "image", "inspect", "-f", "{{.Id}} {{.Size}}", image)
	id, size, _ := strings.Cut(strings.TrimSpace(inspect), " ")
	if id != ids[0] {
		t.Errorf("docker has %s as %s, want the ID build.sh printed, %s", image, id, ids[0])
	}
	if n, err := strconv.ParseFloat(size, 64); err != nil || n > maxImageSize {
		t.Errorf("image size %s bytes, want at most %.0f", size, maxImageSize)
	}
	if out := mustDocker(t, "run", "--rm", image, "version"); strings.TrimSpace(out) != version {
		t.Errorf("catalogue version in the image: %q, want %q", out, version)
	}
	return image
}

// startContainer starts a container with docker args (run ... IMAGE ARGS, without -d and
// --name) and returns its name; it is removed when the test ends, its logs shown if it failed.
func startContainer(t *testing.T, args ...string) string {
	t.Helper()
	name := "catalogue-test-" + randomHex(4)
	runArgs := append([]string{"run", "-d", "--name", name}, args[1:]...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs of %s (%s):\n%s", name, strings.Join(args[len(args)-2:], " "), logs(name))
		}
		_, _ = docker(context.Background(), "rm", "-f", name)
	})
	mustDocker(t, runArgs...)
	return name
}

// waitReady waits until the edge answers /readyz 200: a snapshot loaded.
func waitReady(t *testing.T, base, container string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, _ := getStatus(base + "/readyz")
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edge container was not ready within 60 s (/readyz %d)\n%s", status, logs(container))
		}
		time.Sleep(100 * time.Millisecond) // polling another process's progress
	}
}

func getStatus(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// docker runs the docker client, bounded at 5 minutes, and returns its stdout and stderr.
func docker(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func mustDocker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := docker(t.Context(), args...)
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func exitCode(t *testing.T, container string) string {
	t.Helper()
	return strings.TrimSpace(mustDocker(t, "inspect", "-f", "{{.State.ExitCode}}", container))
}

func logs(container string) string {
	out, _ := docker(context.Background(), "logs", container)
	return out
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
