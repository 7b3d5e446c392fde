package services

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// TestPostgresAndStandby starts a PostgreSQL and a standby of it: a row written on the
// primary is read on the standby; both stop, and their ports are free again.
func TestPostgresAndStandby(t *testing.T) {
	t.Parallel()
	primary := ForTest(t, "CATALOGUE_TEST_PG_URL", Postgres)
	standby := ForTest(t, "CATALOGUE_TEST_STANDBY_URL", func(dir string) (*Server, error) { return Standby(dir, primary.Server) })
	execSQL(t, primary.URL, "CREATE TABLE t (v text); INSERT INTO t VALUES ('written on the primary')")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v string
		err := queryRow(standby.URL, "SELECT v FROM t", &v)
		if err == nil && v == "written on the primary" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby has not replayed the primary's row within 30 s: %q, %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var inRecovery bool
	if err := queryRow(standby.URL, "SELECT pg_is_in_recovery()", &inRecovery); err != nil || !inRecovery {
		t.Errorf("standby: pg_is_in_recovery() = %v, %v; want true", inRecovery, err)
	}
	for _, s := range []*TestServer{standby, primary} {
		stopped(t, s)
	}
}

// TestMinIO starts a MinIO with credentials of its own: a client with them creates a bucket
// and finds it; after a stop the server starts again on its port with the bucket still there;
// after SIGKILL it is gone at once.
func TestMinIO(t *testing.T) {
	t.Parallel()
	m := ForTest(t, "CATALOGUE_TEST_S3_ENDPOINT", func(dir string) (*Server, error) { return MinIO(dir, "testkit", "testkit-secret") })
	client := s3.New(s3.Options{BaseEndpoint: aws.String(m.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "testkit", SecretAccessKey: "testkit-secret"}, nil
		})})
	ctx := t.Context()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("kept")}); err != nil {
		t.Fatalf("create a bucket: %v", err)
	}
	port := m.Port
	stopped(t, m)
	m.Start(t)
	if m.Port != port {
		t.Errorf("started again on port %d, want its earlier %d", m.Port, port)
	}
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("kept")}); err != nil {
		t.Errorf("the bucket after a restart: %v", err)
	}
	pid := m.Pid
	m.Kill(t)
	if _, _, ok := procStatus(pid); ok {
		t.Errorf("MinIO (pid %d) is still there after Kill", pid)
	}
}

// TestRedis starts a Redis: it answers PING; paused (SIGSTOP) it holds its port but never
// answers, resumed it answers again; stopped by another program through its folder
// (Open, as make services-stop does), its port is free.
func TestRedis(t *testing.T) {
	t.Parallel()
	r := ForTest(t, "CATALOGUE_TEST_REDIS_URL", Redis)
	opt, err := redis.ParseURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.ReadTimeout, opt.MaxRetries = 300*time.Millisecond, -1
	client := redis.NewClient(opt)
	defer client.Close()
	if err := client.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	r.Pause(t)
	if err := client.Ping(t.Context()).Err(); err == nil {
		t.Error("a paused Redis answered PING")
	}
	r.Resume(t)
	if err := client.Ping(t.Context()).Err(); err != nil {
		t.Errorf("PING after SIGCONT: %v", err)
	}
	opened, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if opened.URL != r.URL || opened.Pid != r.Pid {
		t.Errorf("Open = %s pid %d, want %s pid %d", opened.URL, opened.Pid, r.URL, r.Pid)
	}
	if err := opened.Start(); err == nil {
		t.Error("a server opened from its folder started")
	}
	if err := StopAll(filepath.Dir(r.Dir)); err != nil {
		t.Fatal(err)
	}
	portFree(t, r)
}

// TestNginx starts nginx with a configuration serving a folder: it answers a file's bytes.
func TestNginx(t *testing.T) {
	t.Parallel()
	www := t.TempDir()
	if err := os.WriteFile(filepath.Join(www, "hello"), []byte("served by nginx"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := `daemon off;
pid @DIR@/nginx.pid;
events {}
http {
    access_log off;
    client_body_temp_path @DIR@/tmp/body;
    proxy_temp_path @DIR@/tmp/proxy;
    fastcgi_temp_path @DIR@/tmp/fastcgi;
    uwsgi_temp_path @DIR@/tmp/uwsgi;
    scgi_temp_path @DIR@/tmp/scgi;
    server { listen @LISTEN@; root ` + www + `; }
}
`
	if os.Geteuid() == 0 {
		conf = "user root;\n" + conf // the workers read www, which only we may enter
	}
	n := ForTest(t, "CATALOGUE_TEST_REQUIRE", func(dir string) (*Server, error) { return Nginx(dir, conf) })
	resp, err := http.Get(n.URL + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "served by nginx" {
		t.Errorf("GET /hello = %s %q, want 200 %q", resp.Status, body, "served by nginx")
	}
	stopped(t, n)
}

// TestNginxNotTakenForAnother: nginx started on a port another program holds is not reported
// started because that program accepts connections (freePort's port can be taken by
// another test's listener before nginx binds it, and a GET then read EOF from it).
func TestNginxNotTakenForAnother(t *testing.T) {
	t.Parallel()
	conf := "daemon off;\npid @DIR@/nginx.pid;\nevents {}\nhttp {\n    access_log off;\n    client_body_temp_path @DIR@/tmp/body;\n" +
		"    proxy_temp_path @DIR@/tmp/proxy;\n    fastcgi_temp_path @DIR@/tmp/fastcgi;\n    uwsgi_temp_path @DIR@/tmp/uwsgi;\n" +
		"    scgi_temp_path @DIR@/tmp/scgi;\n    server { listen @LISTEN@; return 204; }\n}\n"
	n := ForTest(t, "CATALOGUE_TEST_REQUIRE", func(dir string) (*Server, error) { return Nginx(dir, conf) })
	stopped(t, n)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(n.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accepts and hangs up, as a server of something else would
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if err := n.Server.Start(); err == nil {
		t.Errorf("nginx started on a port another listener holds: no error (it answered for nginx)")
	}
}

// TestStartFailsWithTheLog starts a Redis on a port another listener holds: Start fails,
// quoting the server's log, instead of returning a server that is not there.
func TestStartFailsWithTheLog(t *testing.T) {
	t.Parallel()
	r := ForTest(t, "CATALOGUE_TEST_REDIS_URL", Redis)
	stopped(t, r)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = r.Server.Start()
	if err == nil || !strings.Contains(err.Error(), "its log:") || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Start on a taken port: %v; want an error quoting the log's 'in use'", err)
	}
}

// TestStartTriesAnotherPort starts a Redis whose first free port is taken by the time it
// binds it, as happens when another process takes it first: Start tries another port.
func TestStartTriesAnotherPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	calls := 0
	freePort = func() (int, error) {
		calls++
		if calls == 1 {
			return taken, nil
		}
		return FreePort()
	}
	t.Cleanup(func() { freePort = FreePort })
	r := ForTest(t, "CATALOGUE_TEST_REDIS_URL", Redis)
	if r.Port == taken || calls != 2 {
		t.Errorf("Redis started on port %d after %d ports handed out; want another port than the taken %d, on the second", r.Port, calls, taken)
	}
	if err := ping(t.Context(), r.Port); err != nil {
		t.Errorf("PING on port %d: %v", r.Port, err)
	}
}

// stopped stops s and checks that its process is gone and its port free.
func stopped(t *testing.T, s *TestServer) {
	t.Helper()
	pid := s.Pid
	s.Stop(t)
	if comm, state, ok := procStatus(pid); ok && state != "Z" {
		t.Errorf("%s (pid %d, %s) still runs after Stop", s.Kind, pid, comm)
	}
	portFree(t, s)
}

func portFree(t *testing.T, s *TestServer) {
	t.Helper()
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.Port), time.Second); err == nil {
		c.Close()
		t.Errorf("%s's port %d still accepts connections after it stopped", s.Kind, s.Port)
	}
}

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

func queryRow(url, sql string, dest any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest)
}
