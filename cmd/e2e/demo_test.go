package e2e

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trainingco/catalogue/scripts/testkit/services"
)

// demoStartWithin bounds make demo from start to its printed lines: a PostgreSQL of its own,
// go build, the seed (5,000 classes) and builder serve's first build.
const demoStartWithin = 3 * time.Minute

// demoChangeWithin bounds the wait for the demo's change to show in its curl line. The demo
// promises about a second (builder.debounce, a build of one class, edge.poll_interval); this
// is the correctness bound on a loaded machine, not a timing target (make bench has those).
const demoChangeWithin = 15 * time.Second

// TestDemo runs make demo's script as a user does and then the two lines it prints under
// "Change a class": the psql line, which raises a class's cost by 100, and the curl line,
// which must answer with the raised cost while the demo keeps running (builder serve
// publishing the change, the edge reading it), with nothing run by hand in between.
func TestDemo(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CATALOGUE_TEST_REQUIRE") != "" {
				t.Fatalf("make demo needs %s: %v", tool, err)
			}
			t.Skipf("make demo needs %s: %v", tool, err)
		}
	}
	lines := startDemo(t)
	for _, prog := range []string{"builder", "edge"} {
		assertStatic(t, filepath.Join("..", "..", "bin", prog))
	}
	if len(lines) != 3 || !strings.Contains(lines[0], "psql ") || !strings.HasPrefix(lines[1], "curl ") ||
		!strings.HasPrefix(lines[2], "curl ") || !strings.Contains(lines[2], "/public/feeds/classes") {
		t.Fatalf("the demo's lines under \"Change a class\" are not a psql line, a class's curl line and a feed's:\n%s", strings.Join(lines, "\n"))
	}
	psqlLine, curlLine, feedLine := lines[0], lines[1], lines[2]
	class, err := strconv.ParseInt(curlLine[strings.LastIndexByte(curlLine, '/')+1:], 10, 64)
	if err != nil {
		t.Fatalf("the curl line reads no class id: %s", curlLine)
	}
	if items := demoFeed(t, feedLine); len(items) != 0 {
		t.Fatalf("before the change the feed line lists %d items, want none (the feed's end)", len(items))
	}

	before := demoCost(t, curlLine)
	runLine(t, psqlLine)
	changed := time.Now()
	for {
		got := demoCost(t, curlLine)
		if got == before+100 {
			t.Logf("the curl line showed the new cost %d (was %d) %.2fs after the psql line", got, before, time.Since(changed).Seconds())
			break
		}
		if time.Since(changed) > demoChangeWithin {
			t.Fatalf("%s after the psql line the curl line still answers cost %d, want %d", demoChangeWithin, got, before+100)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The edge now serves the snapshot with the change, and its feed with it.
	items := demoFeed(t, feedLine)
	if len(items) != 1 || items[0].ID != class || items[0].State != "updated" || items[0].Data.Cost != before+100 {
		t.Errorf("after the change the feed line lists %+v, want class %d updated with cost %d alone", items, class, before+100)
	}
	testGuideJWT(t, strings.TrimSuffix(curlLine[strings.Index(curlLine, "http"):strings.Index(curlLine, "/public/")], "'"))
}

// demoJWTSecret is the demo edge's edge.jwt.hmac_secret in TestDemo (the demo makes a new
// one unless given one).
const demoJWTSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// testGuideJWT runs the partner's guide's line that makes a student's JWT ("Trying it") and
// its curl line against the demo's edge at base: with the edge's secret the JWT is accepted
// (the class read answers, or 404 for a class the seed did not make, never the 401 of a bad
// token); with another secret it gets that 401, so the check tells the two apart.
func testGuideJWT(t *testing.T, base string) {
	t.Helper()
	lines := guideBlock(t, "### Trying it", "```sh")
	var script []string
	for _, l := range strings.Split(lines, "\n") {
		if !strings.HasPrefix(l, "export ") { // the secret: set below
			script = append(script, l)
		}
	}
	run := func(secret string) string {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
		cmd.Env = append(os.Environ(), "CATALOGUE="+base, "CATALOGUE_EDGE_JWT_HMAC_SECRET="+secret)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the guide's JWT lines: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run(demoJWTSecret); strings.Contains(out, "Unauthenticated") || !strings.Contains(out, "{") {
		t.Errorf("the guide's JWT, made with the edge's secret, got %q", out)
	} else {
		t.Logf("the guide's JWT, made with the edge's secret, got %.120s", out)
	}
	if out := run(strings.Repeat("f", 64)); !strings.Contains(out, `{"message":"Unauthenticated."}`) {
		t.Errorf("the guide's JWT, made with another secret, got %q; want the 401 of a bad token", out)
	}
}

// feedItem is what TestDemo reads of an RPDE item of the classes feed.
type feedItem struct {
	State string `json:"state"`
	ID    int64  `json:"id"`
	Data  struct {
		Cost int `json:"cost"`
	} `json:"data"`
}

// demoFeed runs the demo's feed line and returns the page's items.
func demoFeed(t *testing.T, feedLine string) []feedItem {
	t.Helper()
	body := runLine(t, feedLine)
	var page struct {
		Items *[]feedItem `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || page.Items == nil {
		t.Fatalf("the feed line answered %q, want a feed page (%v)", body, err)
	}
	return *page.Items
}

// startDemo runs scripts/demo.sh as make demo does (building bin/builder and bin/edge, not
// race-enabled: seeding and building with those take a minute) on a free port, stops it at
// the end of the test as Ctrl-C does, and returns the lines it printed under "Change a
// class" (indented, up to the next blank line), without their indent.
func startDemo(t *testing.T) []string {
	t.Helper()
	cmd, lines, _ := launchDemo(t)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT) // the demo stops everything it started
		if err := waitDemo(cmd); err != nil {
			t.Errorf("the demo did not stop cleanly on Ctrl-C: %v", err)
		}
	})
	return lines
}

// waitDemo waits a minute at most for the demo to end after a signal.
func waitDemo(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		return errors.New("still running a minute after the signal")
	}
}

// TestDemoStopsOnTwoSignals: make passes its SIGTERM on to the demo, which so gets two: the
// second cut its cleanup short, leaving its PostgreSQL running and its folder behind (seen
// on one run of two). Two SIGTERMs 100 ms apart must still leave nothing.
func TestDemoStopsOnTwoSignals(t *testing.T) {
	cmd, _, work := launchDemo(t)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = waitDemo(cmd) // a signal's exit status; what it leaves is the test
	if _, err := os.Stat(work); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo's folder %s after two SIGTERMs: %v, want it removed", work, err)
		_ = exec.Command(filepath.Join("..", "..", "scripts", "services.sh"), "stop", filepath.Join(work, "pg")).Run()
		_ = os.RemoveAll(work)
	}
}

// demoWork is the line where the demo names its folder.
var demoWork = regexp.MustCompile(`^demo: starting PostgreSQL in (\S+)$`)

// launchDemo starts the demo and returns it, the lines it prints under "Change a class",
// and its folder, once it has printed them.
func launchDemo(t *testing.T) (*exec.Cmd, []string, string) {
	t.Helper()
	cmd := exec.Command("bash", "scripts/demo.sh")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), fmt.Sprintf("DEMO_PORT=%d", services.Port(t)), "CATALOGUE_EDGE_JWT_HMAC_SECRET="+demoJWTSecret)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var work string
	found := make(chan []string, 1)
	go func() {
		var lines []string
		in, sc := false, bufio.NewScanner(out)
		for sc.Scan() {
			l := sc.Text()
			if m := demoWork.FindStringSubmatch(l); m != nil {
				work = m[1]
			}
			switch {
			case strings.HasPrefix(l, "Change a class"):
				in = true
			case in && strings.HasPrefix(l, "  "):
				lines = append(lines, strings.TrimSpace(l))
			case in && l == "" && len(lines) > 0:
				found <- lines
				_, _ = io.Copy(io.Discard, out)
				return
			case strings.HasPrefix(l, "Press Ctrl-C"): // the last line: it printed none
				close(found)
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
		close(found)
	}()
	select {
	case lines, ok := <-found:
		if !ok || len(lines) < 2 || work == "" {
			_ = cmd.Process.Kill()
			t.Fatalf("the demo ended without naming its folder (%q) and printing a psql line and a curl line under \"Change a class\" (%q)", work, lines)
		}
		return cmd, lines, work
	case <-time.After(demoStartWithin):
		_ = cmd.Process.Kill()
		t.Fatalf("the demo printed no \"Change a class\" lines within %s", demoStartWithin)
	}
	return nil, nil, ""
}

// demoCost runs the demo's curl line and returns the class's cost from its answer.
func demoCost(t *testing.T, curlLine string) int {
	t.Helper()
	body := runLine(t, curlLine)
	var class struct {
		Cost *int `json:"cost"`
	}
	if err := json.Unmarshal([]byte(body), &class); err != nil || class.Cost == nil {
		t.Fatalf("the curl line answered %q, want a class with a cost (%v)", body, err)
	}
	return *class.Cost
}

// runLine runs one printed line in bash, as a user pasting it would, and returns its output.
func runLine(t *testing.T, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", line).Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// assertStatic fails t unless the ELF binary at path is static, as scripts/gobuild.sh builds
// every binary the project ships (make build, the image) and make demo runs: no dynamic
// loader (PT_INTERP) and no shared library it needs.
func assertStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is linked dynamically (it names a dynamic loader), want static", path)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v (%v), want none", path, libs, err)
	}
}
