// Command services starts and stops the test services (scripts/testkit/services) for the
// shell: make services, make test (scripts/test.sh), the bench, the soak and the demo.
// scripts/services.sh builds and runs it.
//
//	services start DIR          PostgreSQL (DIR/pg) with a standby (DIR/standby), MinIO
//	                            (DIR/minio) and Redis (DIR/redis), restarting any running
//	                            there; prints `export NAME='value'` lines for the variables
//	                            the tests read (eval them), Chromium's path among them
//	services stop DIR           stops every server started in DIR or its subfolders
//	services run CMD [ARG...]   starts them in a temporary folder, runs CMD with their
//	                            variables, stops them and removes the folder; exits with
//	                            CMD's status, or 1 when a service cannot start
//	services postgres DIR       one server in DIR; prints its URL (the only line on stdout)
//	services standby DIR PRIMARY_DIR
//	services minio DIR          credentials MINIO_ROOT_USER/MINIO_ROOT_PASSWORD (minioadmin)
//	services redis DIR
//	services nginx DIR CONF     CONF's @DIR@ and @LISTEN@ filled in (see services.Nginx)
//	services pid DIR            the pid of the server running in DIR
//	services pg-program NAME    the path of PostgreSQL's program NAME (psql, pgbench),
//	                            installing PostgreSQL when missing
//	services free-port          a loopback port nothing listens on, for a server of the
//	                            script's own
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/trainingco/catalogue/scripts/testkit/services"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "services:", err)
	}
	os.Exit(code)
}

var errUsage = errors.New("usage: services start|stop DIR | run CMD... | postgres|minio|redis DIR | standby DIR PRIMARY_DIR | nginx DIR CONF | pid DIR | pg-program NAME | free-port")

// run runs one command, printing its result on stdout, and returns the exit code.
func run(args []string, stdout io.Writer) (int, error) {
	if len(args) == 1 && args[0] == "free-port" {
		port, err := services.FreePort()
		if err == nil {
			fmt.Fprintln(stdout, port)
		}
		return exit(err)
	}
	if len(args) < 2 {
		return 2, errUsage
	}
	cmd, arg := args[0], args[1]
	var s *services.Server
	var err error
	switch {
	case cmd == "start" && len(args) == 2:
		env, err := start(arg)
		if err != nil {
			return 1, err
		}
		for _, kv := range env {
			name, value, _ := strings.Cut(kv, "=")
			fmt.Fprintf(stdout, "export %s='%s'\n", name, strings.ReplaceAll(value, "'", `'\''`))
		}
		// A session token or profile from the developer's own AWS setup would spoil MinIO's credentials.
		fmt.Fprintln(stdout, "unset AWS_SESSION_TOKEN AWS_PROFILE")
		return 0, nil
	case cmd == "stop" && len(args) == 2:
		return exit(services.StopAll(arg))
	case cmd == "run":
		return runWith(args[1:], stdout)
	case cmd == "postgres" && len(args) == 2:
		s, err = services.Postgres(arg)
	case cmd == "standby" && len(args) == 3:
		var primary *services.Server
		if primary, err = services.Open(args[2]); err == nil {
			s, err = services.Standby(arg, primary)
		}
	case cmd == "minio" && len(args) == 2:
		s, err = services.MinIO(arg, os.Getenv("MINIO_ROOT_USER"), os.Getenv("MINIO_ROOT_PASSWORD"))
	case cmd == "redis" && len(args) == 2:
		s, err = services.Redis(arg)
	case cmd == "nginx" && len(args) == 3:
		var conf []byte
		if conf, err = os.ReadFile(args[2]); err == nil {
			s, err = services.Nginx(arg, string(conf))
		}
	case cmd == "pid" && len(args) == 2:
		if s, err = services.Open(arg); err == nil {
			fmt.Fprintln(stdout, s.Pid)
		}
		return exit(err)
	case cmd == "pg-program" && len(args) == 2:
		var path string
		if path, err = services.PostgresProgram(arg); err == nil {
			fmt.Fprintln(stdout, path)
		}
		return exit(err)
	default:
		return 2, errUsage
	}
	if err != nil {
		return 1, err
	}
	fmt.Fprintln(stdout, s.URL)
	return 0, nil
}

func exit(err error) (int, error) {
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// start starts every test service in dir, after stopping any running there, and returns
// the variables the tests read, as NAME=value. A start that fails stops what it started.
func start(dir string) (env []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// PostgreSQL, run as the user postgres when we are root, must be able to enter dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if err := services.StopAll(dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = services.StopAll(dir)
		}
	}()
	pg, err := services.Postgres(filepath.Join(dir, "pg"))
	if err != nil {
		return nil, err
	}
	standby, err := services.Standby(filepath.Join(dir, "standby"), pg)
	if err != nil {
		return nil, err
	}
	user, password := os.Getenv("MINIO_ROOT_USER"), os.Getenv("MINIO_ROOT_PASSWORD")
	if user == "" || password == "" {
		user, password = "minioadmin", "minioadmin"
	}
	minio, err := services.MinIO(filepath.Join(dir, "minio"), user, password)
	if err != nil {
		return nil, err
	}
	redis, err := services.Redis(filepath.Join(dir, "redis"))
	if err != nil {
		return nil, err
	}
	// Not a service: the browser that loads the docs page in cmd/e2e, installed when missing.
	chromium, err := services.Chromium()
	if err != nil {
		return nil, err
	}
	return []string{
		"CATALOGUE_TEST_PG_URL=" + pg.URL,
		"CATALOGUE_TEST_STANDBY_URL=" + standby.URL,
		"CATALOGUE_TEST_S3_ENDPOINT=" + minio.URL,
		"CATALOGUE_TEST_REDIS_URL=" + redis.URL,
		"CATALOGUE_TEST_CHROMIUM=" + chromium,
		"AWS_ACCESS_KEY_ID=" + user,
		"AWS_SECRET_ACCESS_KEY=" + password,
		"AWS_REGION=us-east-1",
		"CATALOGUE_TEST_REQUIRE=1",
	}, nil
}

// runWith starts the services in a temporary folder, runs the command with their
// variables, and stops them whatever happens. SIGINT and SIGTERM go to the command, whose
// end this waits for before stopping the services.
func runWith(command []string, stdout io.Writer) (code int, err error) {
	dir, err := os.MkdirTemp("", "catalogue-test.")
	if err != nil {
		return 1, err
	}
	defer func() {
		if e := errors.Join(services.StopAll(dir), os.RemoveAll(dir)); e != nil && err == nil {
			code, err = 1, e
		}
	}()
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	env, err := start(dir)
	if err != nil {
		return 1, fmt.Errorf("the test services did not start: %w", err)
	}
	select {
	case sig := <-signals:
		return 128 + int(sig.(syscall.Signal)), fmt.Errorf("%v while the services started", sig)
	default:
	}
	fmt.Fprintf(os.Stderr, "services: %s\n", strings.Join(env[:4], " "))
	cmd := exec.Command(command[0], command[1:]...)
	// A session token or profile from the developer's own AWS setup would spoil MinIO's credentials.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_SESSION_TOKEN=") && !strings.HasPrefix(kv, "AWS_PROFILE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	go func() {
		for sig := range signals {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err = cmd.Wait()
	if exitErr, ok := errors.AsType[*exec.ExitError](err); ok {
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exitErr.ExitCode(), nil
	}
	return exit(err)
}
