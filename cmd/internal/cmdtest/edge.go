package cmdtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Time limits of the edge's life in a test.
const (
	startTimeout = 30 * time.Second // from exec to the started line
	stopTimeout  = 30 * time.Second // from SIGTERM to exit; the edge itself allows 20 s
)

// Edge is a running edge binary.
type Edge struct {
	URL string // http://127.0.0.1:PORT, without the base path
	// MetricsURL is where the edge answers /metrics: edge.metrics_listen, 127.0.0.1:0
	// unless the test sets CATALOGUE_EDGE_METRICS_LISTEN; "" when set empty (no listener).
	MetricsURL string
	Cmd        *exec.Cmd // the process; use Signal, Wait and Stop rather than Cmd.Wait

	logs   *logBuffer
	client *http.Client
	exited chan struct{} // closed when the process has exited and err is set
	err    error         // Cmd.Wait's result
}

// StartEdge starts the edge on 127.0.0.1:0 with the environment of e plus extra, waits for
// its first loads (its started line) and returns it. When the test ends it is stopped with SIGTERM, and the
// test fails if it then does not exit 0 (with -race, a data race makes it exit 66).
func (e *Env) StartEdge(t testing.TB, extra map[string]string) *Edge {
	t.Helper()
	_, bin := Binaries(t)
	env := &Env{DatabaseURL: e.DatabaseURL, Store: e.Store, Extra: maps.Clone(e.Extra)}
	if env.Extra == nil {
		env.Extra = map[string]string{}
	}
	env.Extra["CATALOGUE_EDGE_METRICS_LISTEN"] = "127.0.0.1:0"
	maps.Copy(env.Extra, extra)
	d := &Edge{
		Cmd:    exec.Command(bin, "--listen", "127.0.0.1:0"),
		logs:   newLogBuffer(),
		exited: make(chan struct{}),
		client: &http.Client{
			Timeout: 30 * time.Second,
			// Tests check the bytes sent: no transparent gzip, no redirects followed.
			Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	d.Cmd.Env = env.Environ()
	d.Cmd.Stdout, d.Cmd.Stderr = d.logs, d.logs
	if err := d.Cmd.Start(); err != nil {
		t.Fatalf("start edge: %v", err)
	}
	go func() {
		d.err = d.Cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() { d.cleanup(t) })
	addr, err := d.waitListening()
	if err != nil {
		t.Fatalf("edge did not start: %v\nlogs:\n%s", err, d.Logs())
	}
	d.URL = "http://" + addr
	if m := logged(d.Logs(), "metrics at /metrics", "address"); m != "" {
		d.MetricsURL = "http://" + m + "/metrics"
	}
	return d
}

// Metrics returns the body of the edge's /metrics on its metrics listener.
func (d *Edge) Metrics(t testing.TB) string {
	t.Helper()
	if d.MetricsURL == "" {
		t.Fatal("the edge has no metrics listener (CATALOGUE_EDGE_METRICS_LISTEN is empty)")
	}
	req, err := http.NewRequest(http.MethodGet, d.MetricsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := d.Send(t, req)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", d.MetricsURL, r.Status, r.Data)
	}
	return string(r.Data)
}

// logged returns the string field of the first JSON log line whose msg is msg, or "".
func logged(logs, msg, field string) string {
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == msg {
			v, _ := l[field].(string)
			return v
		}
	}
	return ""
}

// waitListening waits for the JSON log lines {"msg":"listening","addr":...} and
// {"msg":"started"} and returns addr.
func (d *Edge) waitListening() (string, error) {
	deadline := time.After(startTimeout)
	for {
		// Take the channel before reading the logs: a write in between then closes it,
		// instead of being missed until the next write, which may never come.
		changed := d.logs.changed()
		if addr := listeningAddr(d.Logs()); addr != "" {
			return addr, nil
		}
		select {
		case <-changed:
		case <-d.exited:
			if addr := listeningAddr(d.Logs()); addr != "" {
				return addr, nil
			}
			return "", fmt.Errorf("exited before listening: %v", d.err)
		case <-deadline:
			return "", fmt.Errorf("no listening line within %s", startTimeout)
		}
	}
}

// listeningAddr returns the addr of the first listening line in logs once the edge has also
// logged "started" (its first loads of the snapshot and the token set are over, whether they
// succeeded or not: it listens before them), or "".
func listeningAddr(logs string) string {
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	addr, started := "", false
	for sc.Scan() {
		var l struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch {
		case l.Msg == "listening" && l.Addr != "" && addr == "":
			addr = l.Addr
		case l.Msg == "started":
			started = true
		}
	}
	if !started {
		return ""
	}
	return addr
}

// cleanup stops the edge if the test has not, and fails the test if it exits badly.
func (d *Edge) cleanup(t testing.TB) {
	d.client.CloseIdleConnections()
	select {
	case <-d.exited:
		return // the test stopped it and has seen how it ended
	default:
	}
	if err := d.Stop(t); err != nil {
		t.Errorf("edge: %v\nlogs:\n%s", err, d.Logs())
	}
}

// Logs returns everything the edge has written so far, stdout and stderr interleaved.
func (d *Edge) Logs() string { return d.logs.String() }

// Signal sends sig to the edge.
func (d *Edge) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := d.Cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal edge: %v", err)
	}
}

// Wait waits up to within for the edge to exit and returns how it ended: nil for exit 0, an
// *exec.ExitError otherwise. If it has not exited by then, Wait kills it and says so.
func (d *Edge) Wait(t testing.TB, within time.Duration) error {
	t.Helper()
	select {
	case <-d.exited:
		return d.err
	case <-time.After(within):
	}
	_ = d.Cmd.Process.Kill()
	<-d.exited
	return fmt.Errorf("edge did not exit within %s and was killed: %w", within, d.err)
}

// Stop sends SIGTERM and waits for the edge to exit; it returns as Wait does. Stopping an
// edge that has exited returns how it ended.
func (d *Edge) Stop(t testing.TB) error {
	t.Helper()
	select {
	case <-d.exited:
		return d.err
	default:
	}
	// An error here means the process has just exited; Wait reports how.
	_ = d.Cmd.Process.Signal(syscall.SIGTERM)
	return d.Wait(t, stopTimeout)
}

// logBuffer collects the output of the edge and tells waiters when it grows.
type logBuffer struct {
	mu     sync.Mutex
	buf    strings.Builder
	notify chan struct{} // closed and replaced on every write
}

func newLogBuffer() *logBuffer { return &logBuffer{notify: make(chan struct{})} }

// Write appends p; exec copies both of the process's outputs into it.
func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.notify)
	l.notify = make(chan struct{})
	return len(p), nil
}

// String returns what has been written so far.
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// changed returns a channel closed at the next write.
func (l *logBuffer) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.notify
}
