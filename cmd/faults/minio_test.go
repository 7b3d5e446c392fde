package faults

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/trainingco/catalogue/builder/buildertest"
	"github.com/trainingco/catalogue/config"
)

// minio is a MinIO of one test's own, started and stopped with scripts/minio.sh, so that the
// test can take it away without disturbing other tests. It comes back on the same port, as
// a restarted server would, so that clients configured with its endpoint find it again.
type minio struct {
	dir      string
	endpoint string // http://127.0.0.1:PORT
	port     string
	up       bool
}

// startMinIO starts a dedicated MinIO and stops it when the test ends. It needs the test
// services to be there (the MinIO binary comes with them), so it skips or fails like
// buildertest when CATALOGUE_TEST_S3_ENDPOINT is unset.
func startMinIO(t testing.TB) *minio {
	t.Helper()
	buildertest.NewS3Store(t) // only for its check that MinIO is available
	m := &minio{dir: t.TempDir()}
	m.start(t)
	t.Cleanup(func() {
		if m.up {
			m.stop(t)
		}
	})
	return m
}

// script returns the path of scripts/minio.sh, found from this source file.
func script(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the source folder")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "minio.sh")
}

// start starts MinIO, on its earlier port when it ran before. Its credentials are those of
// the test MinIO, which the binaries and the test's own clients already use.
func (m *minio) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(script(t), "start", m.dir)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+os.Getenv("AWS_ACCESS_KEY_ID"),
		"MINIO_ROOT_PASSWORD="+os.Getenv("AWS_SECRET_ACCESS_KEY"))
	if m.port != "" {
		cmd.Env = append(cmd.Env, "MINIO_PORT="+m.port)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("minio.sh start: %v\n%s", err, stderr.String())
	}
	endpoint := strings.TrimSpace(string(out))
	u, err := url.Parse(endpoint)
	if err != nil || u.Port() == "" || (m.port != "" && u.Port() != m.port) {
		t.Fatalf("minio.sh start printed %q, want http://127.0.0.1:PORT (port %q if set)", endpoint, m.port)
	}
	m.endpoint, m.port, m.up = endpoint, u.Port(), true
}

// stop stops MinIO gracefully with minio.sh stop.
func (m *minio) stop(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(script(t), "stop", m.dir).CombinedOutput(); err != nil {
		t.Fatalf("minio.sh stop: %v\n%s", err, out)
	}
	m.up = false
}

// kill ends MinIO at once with SIGKILL, as a crash would, and then lets minio.sh tidy up.
func (m *minio) kill(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.dir, "pid"))
	if err != nil {
		t.Fatalf("read MinIO's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("MinIO's pid file holds %q", b)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill MinIO (pid %d): %v", pid, err)
	}
	m.stop(t) // waits for the process to be gone and removes the pid file
}

// store returns the configuration of a bucket on this MinIO.
func (m *minio) store(bucket string) config.Store {
	return config.Store{URL: fmt.Sprintf("s3://%s/catalogue", bucket), Endpoint: m.endpoint, Region: "us-east-1"}
}
