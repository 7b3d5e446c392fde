package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestRunDispatches(t *testing.T) {
	var got []string
	programs["edge"] = func() { got = os.Args }
	t.Cleanup(func() { delete(programs, "edge") })
	saved := os.Args
	t.Cleanup(func() { os.Args = saved })

	var stdout, stderr bytes.Buffer
	if code := run([]string{"edge", "--listen", ":9000"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run edge: exit %d, want 0\n%s", code, stderr.String())
	}
	// The program sees its own name as os.Args[0], as when run as its own binary.
	if want := []string{"edge", "--listen", ":9000"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("edge's os.Args = %q, want %q", got, want)
	}
}

func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout for 0, stderr otherwise
	}{
		{nil, 2, "Usage: catalogue PROGRAM"},
		{[]string{"shell"}, 2, `unknown program "shell"`},
		{[]string{"help"}, 0, "Usage: catalogue PROGRAM"},
		{[]string{"version"}, 0, "dev\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		out := stderr.String()
		if tc.code == 0 {
			out = stdout.String()
		}
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("run %q: exit %d, output %q; want exit %d and %q", tc.args, code, out, tc.code, tc.out)
		}
	}
}

// unsetenv unsets name for the rest of the test: set to "", a variable is a value.
func unsetenv(t *testing.T, name string) {
	t.Setenv(name, "") // restores the value the test found, at its end
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

func TestProbeURL(t *testing.T) {
	unsetenv(t, "CATALOGUE_EDGE_LISTEN")
	unsetenv(t, "CATALOGUE_BUILDER_METRICS_LISTEN")
	dir := t.TempDir()
	file := dir + "/catalogue.yaml"
	if err := os.WriteFile(file, []byte("edge:\n  listen: 10.1.2.3:8181\nbuilder:\n  metrics_listen: :9464\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string // CATALOGUE_EDGE_LISTEN, unset when empty
		args []string
		want string
	}{
		{"", []string{"edge"}, "http://127.0.0.1:8080/healthz"}, // edge.listen's default, :8080
		{"0.0.0.0:9000", []string{"edge"}, "http://127.0.0.1:9000/healthz"},
		{"[::]:9000", []string{"edge"}, "http://127.0.0.1:9000/healthz"},
		{"0.0.0.0:9000", []string{"edge", "--listen=127.0.0.2:7000"}, "http://127.0.0.2:7000/healthz"},
		{"", []string{"edge", "-config", file}, "http://10.1.2.3:8181/healthz"},
		{"", []string{"builder", "serve", "--config", file}, "http://127.0.0.1:9464/metrics"},
		{"", []string{"builder", "serve"}, ""}, // no builder.metrics_listen
		{"", []string{"builder", "run", "--config", file}, ""},
		// builder serve's flag overrides the file, as it does for serve itself.
		{"", []string{"builder", "serve", "--metrics-listen", "127.0.0.1:21791"}, "http://127.0.0.1:21791/metrics"},
		{"", []string{"builder", "serve", "--config", file, "-metrics-listen=127.0.0.1:21792"}, "http://127.0.0.1:21792/metrics"},
	} {
		if tc.env == "" {
			unsetenv(t, "CATALOGUE_EDGE_LISTEN")
		} else {
			t.Setenv("CATALOGUE_EDGE_LISTEN", tc.env)
		}
		got, err := probeURL(tc.args)
		if err != nil || got != tc.want {
			t.Errorf("probeURL(%q) with CATALOGUE_EDGE_LISTEN=%q = %q, %v; want %q", tc.args, tc.env, got, err, tc.want)
		}
	}
	if _, err := probeURL([]string{"sh", "-c", "true"}); err == nil {
		t.Error(`probeURL("sh -c true"): no error`)
	}
}

// TestProgramArgs: the program's arguments are read from PID 1's command line after the
// entrypoint, also when PID 1 is an init that runs it (docker run --init, Compose's init:
// true), which made the healthcheck read "--" as the program and fail forever.
func TestProgramArgs(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		want    []string
	}{
		{"/usr/local/bin/catalogue\x00edge\x00--config\x00/etc/catalogue/catalogue.yaml\x00", []string{"edge", "--config", "/etc/catalogue/catalogue.yaml"}},
		{"/sbin/docker-init\x00--\x00/usr/local/bin/catalogue\x00edge\x00", []string{"edge"}},
		{"/tini\x00--\x00/usr/local/bin/catalogue\x00builder\x00serve\x00", []string{"builder", "serve"}},
	} {
		if got := programArgs([]byte(tc.cmdline)); !slices.Equal(got, tc.want) {
			t.Errorf("programArgs(%q) = %q, want %q", tc.cmdline, got, tc.want)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	args := []string{"edge", "--listen", strings.TrimPrefix(srv.URL, "http://")}

	for _, tc := range []struct {
		status, code int
	}{{http.StatusOK, 0}, {http.StatusServiceUnavailable, 1}} {
		status = tc.status
		var stdout, stderr bytes.Buffer
		if code := healthcheck(args, &stdout, &stderr); code != tc.code {
			t.Errorf("healthcheck with /healthz %d: exit %d, want %d\n%s%s", tc.status, code, tc.code, stdout.String(), stderr.String())
		}
	}
	srv.Close()
	var stdout, stderr bytes.Buffer
	if code := healthcheck(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "refused") {
		t.Errorf("healthcheck with the edge gone: exit %d, stderr %q; want 1, connection refused", code, stderr.String())
	}
}
