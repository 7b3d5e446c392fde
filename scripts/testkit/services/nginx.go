package services

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Nginx starts nginx in dir with the configuration conf, in which it replaces @DIR@ with
// dir (for the pid file, logs and temporary files, in dir/tmp) and @LISTEN@ with
// 127.0.0.1:PORT, and returns it; URL is http://127.0.0.1:PORT. conf must say `daemon off;`
// so that the server stays the process started. Debian's nginx is installed when missing.
// Pid is nginx's master; its workers are its children.
func Nginx(dir, conf string) (*Server, error) {
	s, err := newServer("nginx", dir)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(conf, "daemon off;") {
		return nil, fmt.Errorf("nginx: the configuration must say daemon off;")
	}
	bin, err := program("nginx", onPath([]string{"nginx"}, "/usr/sbin"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, "tmp"), 0o755); err != nil {
		return nil, err
	}
	s.command = func(port int) (*exec.Cmd, error) {
		path := filepath.Join(s.Dir, "nginx.conf")
		text := strings.NewReplacer("@DIR@", s.Dir, "@LISTEN@", "127.0.0.1:"+strconv.Itoa(port)).Replace(conf)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, err
		}
		return exec.Command(bin, "-p", s.Dir, "-c", path, "-e", filepath.Join(s.Dir, "error.log")), nil
	}
	s.url = func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
	s.ready = func(ctx context.Context, s *Server) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
		if err == nil {
			conn.Close()
		}
		return err
	}
	return s, s.Start()
}
