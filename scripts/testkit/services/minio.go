package services

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
