package services

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
	s.ready = nginxAnswers
	return s, s.Start()
}

// nginxAnswers is nginx's readiness: an HTTP answer that says it is nginx's. Accepting a
// connection is not enough: another program can take the port freePort chose before nginx
// binds it (nginx then exits, unable to bind), and that program's listener would have been
// taken for nginx's.
func nginxAnswers(ctx context.Context, s *Server) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, s.url(s.Port)+"/", nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if server := resp.Header.Get("Server"); server != "nginx" && !strings.HasPrefix(server, "nginx/") {
		return fmt.Errorf("port %d answers, but not as nginx (Server: %q)", s.Port, server)
	}
	return nil
}
