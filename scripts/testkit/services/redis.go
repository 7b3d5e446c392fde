package services

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"
)

// Redis starts a throwaway Redis in dir and returns it; URL is redis://127.0.0.1:PORT/0.
// Nothing is persisted (no RDB, no AOF): a restarted server starts empty, as the rate limit
// it holds for the edges may. protected-mode stays on (loopback only, no password needed
// there). Debian's redis-server is installed when missing.
func Redis(dir string) (*Server, error) {
	s, err := newServer("redis", dir)
	if err != nil {
		return nil, err
	}
	bin, err := program("redis-server", onPath([]string{"redis-server"}, "/usr/bin", "/usr/sbin"))
	if err != nil {
		return nil, err
	}
	s.command = func(port int) (*exec.Cmd, error) {
		return exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", s.Dir,
			"--save", "", "--appendonly", "no", "--daemonize", "no"), nil
	}
	s.url = func(port int) string { return fmt.Sprintf("redis://127.0.0.1:%d/0", port) }
	s.ready = func(ctx context.Context, s *Server) error { return ping(ctx, s.Port) }
	return s, s.Start()
}

// ping sends Redis's PING on port and expects +PONG.
func ping(ctx context.Context, port int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}
