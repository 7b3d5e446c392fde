package services

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// MinIO starts a throwaway MinIO (S3-compatible) in dir, its objects in dir/data, with the
// root credentials user and password (minioadmin when empty; clients use them as
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), and returns it; URL is its endpoint
// http://127.0.0.1:PORT. The console listens on another free port. MinIO settings in the
// environment (MINIO_SCANNER_SPEED) pass on; it never checks for updates.
func MinIO(dir, user, password string) (*Server, error) {
	s, err := newServer("minio", dir)
	if err != nil {
		return nil, err
	}
	if err := checkRoom(s.Dir); err != nil {
		return nil, err
	}
	bin, err := minioProgram()
	if err != nil {
		return nil, err
	}
	if user == "" {
		user = "minioadmin"
	}
	if password == "" {
		password = "minioadmin"
	}
	s.command = func(port int) (*exec.Cmd, error) {
		console, err := FreePort()
		for err == nil && console == port {
			console, err = FreePort()
		}
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "server", "--address", "127.0.0.1:"+strconv.Itoa(port),
			"--console-address", "127.0.0.1:"+strconv.Itoa(console), filepath.Join(s.Dir, "data"))
		cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+password, "MINIO_UPDATE=off")
		return cmd, nil
	}
	s.url = func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
	s.ready = func(ctx context.Context, s *Server) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/minio/health/live", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("liveness probe: %s", resp.Status)
		}
		return nil
	}
	return s, s.Start()
}

// minioHeadroom is the free space the tests need above MinIO's own floor: a test run writes
// a few hundred megabytes of objects.
const minioHeadroom = 512 << 20

// checkRoom refuses to start MinIO on a disk too full for it. MinIO answers every write with
// 507 XMinioStorageFull once 1% or less of the disk would be left free (diskFillFraction),
// which fails every test that publishes, far from the cause.
func checkRoom(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("minio: free space of %s: %w", dir, err)
	}
	return room(dir, st.Blocks*uint64(st.Bsize), st.Bavail*uint64(st.Bsize))
}

// room is checkRoom's rule for a disk of total bytes with free bytes available.
func room(dir string, total, free uint64) error {
	need := total/100 + minioHeadroom
	if free >= need {
		return nil
	}
	const gib = 1 << 30
	return fmt.Errorf("minio: the disk holding %s has %.1f GiB free of %.1f GiB; MinIO refuses every write "+
		"once 1%% of a disk or less is left free, and the tests need %.1f GiB free: free some space first",
		dir, float64(free)/gib, float64(total)/gib, float64(need)/gib)
}
