package services

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres starts a throwaway PostgreSQL in dir (its cluster in dir/data, created on first
// use) and returns it; URL is the admin URL postgres://postgres@127.0.0.1:PORT/postgres.
// Its settings suit a disposable test server: no durability, loopback only, trust
// authentication, room for many connections. initdb and postgres refuse to run as root, so
// when we are root the cluster belongs to the unprivileged user "postgres", created when
// missing, which must be able to reach dir.
func Postgres(dir string) (*Server, error) {
	s, owner, err := postgresServer("postgres", dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "data", "PG_VERSION")); err != nil {
		initdb, err := PostgresProgram("initdb")
		if err != nil {
			return nil, err
		}
		if err := run(owner, filepath.Join(s.Dir, "initdb.log"), initdb, "-D", filepath.Join(s.Dir, "data"),
			"-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"); err != nil {
			return nil, err
		}
	}
	// wal_keep_size: the tests create databases in bursts, each copied into the WAL, and a
	// standby starved of CPU meanwhile found the segments it still needed removed ("requested
	// WAL segment has already been removed") and never caught up; the primary keeps 2 GB.
	return s, s.postgres(owner, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=256MB", "-c", "wal_keep_size=2GB")
}

// Standby starts a streaming standby of primary in dir and returns it: a real read replica,
// a base backup of the primary (pg_basebackup -R, which writes the standby.signal and
// primary_conninfo that make it stream), so it holds every database of the primary and
// every one created later. Postgres's initdb allows replication connections from loopback,
// and PostgreSQL's defaults (wal_level replica, max_wal_senders 10) let the primary stream.
// A hot standby needs max_connections at least the primary's.
func Standby(dir string, primary *Server) (*Server, error) {
	s, owner, err := postgresServer("standby", dir)
	if err != nil {
		return nil, err
	}
	basebackup, err := PostgresProgram("pg_basebackup")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(s.Dir, "data")
	if err := os.RemoveAll(data); err != nil {
		return nil, err
	}
	if err := run(owner, filepath.Join(s.Dir, "basebackup.log"), basebackup, "-h", "127.0.0.1",
		"-p", strconv.Itoa(primary.Port), "-U", "postgres", "-D", data, "-R", "-X", "stream", "-c", "fast"); err != nil {
		return nil, err
	}
	return s, s.postgres(owner, "-c", "hot_standby=on", "-c", "fsync=off", "-c", "max_connections=300",
		"-c", "shared_buffers=64MB")
}

// postgresServer prepares dir for a cluster: owned by the user the cluster runs as (nil:
// ourselves), who must be able to reach it.
func postgresServer(kind, dir string) (*Server, *syscall.Credential, error) {
	s, err := newServer(kind, dir)
	if err != nil {
		return nil, nil, err
	}
	owner, err := clusterOwner()
	if err != nil || owner == nil {
		return s, nil, err
	}
	if err := os.Chown(s.Dir, int(owner.Uid), int(owner.Gid)); err != nil {
		return nil, nil, err
	}
	if err := run(owner, "", "test", "-w", s.Dir); err != nil {
		return nil, nil, fmt.Errorf("user postgres cannot reach %s; make its parent folders traversable (chmod o+x)", s.Dir)
	}
	return s, owner, nil
}

// clusterOwner is nil when we are not root, else the user "postgres", created when missing.
func clusterOwner() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "postgres").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("useradd postgres: %w: %s", err, out)
		}
		if u, err = user.Lookup("postgres"); err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// run runs a program as owner (nil: ourselves), its output in logPath (or returned in the
// error when logPath is empty or it fails).
func run(owner *syscall.Credential, logPath, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: owner}
	out, err := cmd.CombinedOutput()
	if logPath != "" {
		_ = os.WriteFile(logPath, out, 0o644)
	}
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(name), err, out)
	}
	return nil
}

// postgres starts the cluster in s.Dir/data as owner with the server options given.
func (s *Server) postgres(owner *syscall.Credential, options ...string) error {
	bin, err := PostgresProgram("postgres")
	if err != nil {
		return err
	}
	s.command = func(port int) (*exec.Cmd, error) {
		args := append([]string{"-D", filepath.Join(s.Dir, "data"), "-p", strconv.Itoa(port), "-k", s.Dir,
			"-c", "listen_addresses=127.0.0.1"}, options...)
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: owner}
		return cmd, nil
	}
	s.url = func(port int) string {
		return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	}
	s.ready = func(ctx context.Context, s *Server) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.URL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return conn.Ping(ctx)
	}
	return s.Start()
}
