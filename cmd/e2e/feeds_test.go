package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/cmd/internal/docs"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// testFeedsValidator walks both feeds (D35–D39) with @openactive/rpde-validator, the
// OpenActive community's RPDE validator (scripts/openapi/rpde-validate.js), as a harvesting
// partner would: from the start to the last page, with the API token. Any failure it reports
// fails the test; its warnings may only be the expected ones: "public" caching (D38 says
// private: the feeds need a token) and no deleted items (nothing is deleted before this runs).
func (f *fixture) testFeedsValidator(t *testing.T) {
	for _, feed := range []string{"courses", "classes"} {
		out, err := rpdeValidate(t, f.edge.URL+base+"/public/feeds/"+feed, f.token)
		if err != nil {
			t.Errorf("rpde-validator on the %s feed: %v\n%s", feed, err, out)
			continue
		}
		// The walk reached the last page: the one with items and the empty one after it.
		if n := walkedPages(out); n < 2 {
			t.Errorf("rpde-validator walked %d pages of the %s feed, want at least 2:\n%s", n, feed, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.HasPrefix(line, "warning\t") && !strings.Contains(line, "\tHttpCacheHeaderRule: ") && !strings.Contains(line, "\tDeletedItemsRule: ") {
				t.Errorf("rpde-validator on the %s feed: unexpected warning %s", feed, line)
			}
		}
	}
	// The validator fails what is not a feed: the course list has no next and no items.
	if out, err := rpdeValidate(t, f.edge.URL+base+"/public/courses", f.token); err == nil {
		t.Errorf("rpde-validator passed /public/courses, which is not an RPDE feed:\n%s", out)
	}
}

var walked = regexp.MustCompile(`(?m)^pages\t(\d+)\t`)

func walkedPages(out string) int {
	m := walked.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// rpdeValidate runs the validator on url and returns what it printed; the error is non-nil
// when it reported a failure or could not run.
func rpdeValidate(t *testing.T, url, token string) (string, error) {
	t.Helper()
	nm := nodeModules(t)
	cmd := exec.Command("node", filepath.Join(testkit.RepoRoot(t), "scripts", "openapi", "rpde-validate.js"), url, token)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nm)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var (
	nodeModulesOnce sync.Once
	nodeModulesPath string
	nodeModulesErr  error
)

// nodeModules installs the pinned npm packages once (scripts/openapi.sh modules, which
// installs Node.js too when missing) and returns their node_modules folder.
func nodeModules(t *testing.T) string {
	t.Helper()
	nodeModulesOnce.Do(func() {
		cmd := exec.Command(filepath.Join(testkit.RepoRoot(t), "scripts", "openapi.sh"), "modules")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		nodeModulesPath, nodeModulesErr = strings.TrimSpace(string(out)), err
	})
	if nodeModulesErr != nil {
		t.Fatalf("scripts/openapi.sh modules: %v", nodeModulesErr)
	}
	return nodeModulesPath
}

// testGuideMirror runs the partner's guide's shell lines that mirror the classes feed (curl and jq)
// against the edge: every class they write is the class read's document, and a second run,
// from the position the first kept, finds nothing new and keeps the same position.
func (f *fixture) testGuideMirror(t *testing.T) {
	dir := t.TempDir()
	run := func() { f.runGuideMirror(t, dir, f.token) }
	run()
	files := f.checkMirrorFiles(t, dir)
	first, err := os.ReadFile(filepath.Join(dir, "mirror", ".next"))

	if err != nil || !strings.Contains(string(first), "/public/feeds/classes?afterChangeNumber=") {
		t.Fatalf("mirror/.next = %q, %v; want the classes feed after a change number", first, err)
	}
	run()
	if again, _ := os.ReadFile(filepath.Join(dir, "mirror", ".next")); string(again) != string(first) {
		t.Errorf("a second run moved the position from %q to %q with nothing changed", first, again)
	}
	if after, _ := filepath.Glob(filepath.Join(dir, "mirror", "*.json")); len(after) != len(files) {
		t.Errorf("a second run left %d classes, the first wrote %d", len(after), len(files))
	}
}

// runGuideMirror runs the guide's shell lines that mirror the classes feed in dir with token.
func (f *fixture) runGuideMirror(t *testing.T, dir, token string) {
	t.Helper()
	script := guideBlock(t, "### Mirroring the classes feed with curl and jq", "```sh")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a mirror that never ends
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CATALOGUE="+f.edge.URL+base, "TOKEN="+token)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the guide's mirror lines: %v\n%s", err, out)
	}
}

// checkMirrorFiles checks the classes the guide's shell lines wrote in dir/mirror, each the
// class read's document, and returns their files.
func (f *fixture) checkMirrorFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "mirror", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the guide's mirror lines wrote no class: %v", err)
	}
	for _, file := range files {
		id := strings.TrimSuffix(filepath.Base(file), ".json")
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want := f.get(t, "/public/class/"+id)
		if want.StatusCode != 200 || !jsonEqual(t, got, want.Data) {
			t.Errorf("mirror/%s.json = %s; the class read gives %d %s", id, got, want.StatusCode, want.Data)
		}
	}
	return files
}

// testGuideMirrorsWait runs both of the guide's mirrors with a token over its limit, at
// once: each must wait as the 429 says and finish with the whole feed. A first mirror of the
// catalogue is about 200 requests at 60 a minute; the Node one stopped at the 429 ("page.items
// is not iterable"), the shell one exited after its first request.
func (f *fixture) testGuideMirrorsWait(t *testing.T) {
	id, token := f.env.NewToken(t, "guide-limited")
	f.env.MustBuilder(t, "token", "set-limit", id, "4") // both mirrors need 2 requests each
	deadline := time.Now().Add(readyWithin)
	for {
		r := f.edge.Get(t, base+"/public/courses", token)
		if r.StatusCode == http.StatusTooManyRequests {
			break // spent, on the limit of 4 the edge has loaded
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token was not limited within %v (X-RateLimit-Limit %s)", readyWithin, r.Header.Get("X-RateLimit-Limit"))
		}
	}
	// Both wait out the same minute.
	t.Run("node", func(t *testing.T) {
		t.Parallel()
		f.checkNodeMirror(t, f.runGuideNode(t, token, 3*time.Minute))
	})
	t.Run("shell", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		f.runGuideMirror(t, dir, token)
		f.checkMirrorFiles(t, dir)
	})
}

// testGuideConditional runs the partner's guide's lines that keep a document with its ETag
// and send it back ("Caching and conditional requests") against the edge: the second request
// answers 304, as the guide prints.
func (f *fixture) testGuideConditional(t *testing.T) {
	script := guideBlock(t, "## Caching and conditional requests", "```sh")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CATALOGUE="+f.edge.URL+base, "TOKEN="+f.token)
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "304\n" {
		t.Fatalf("the guide's conditional request printed %q (%v), want 304:\n%s", out, err, script)
	}
	if b, err := os.ReadFile(filepath.Join(cmd.Dir, "courses.json")); err != nil || !jsonEqual(t, b, f.get(t, "/public/courses").Data) {
		t.Errorf("courses.json = %.200s (%v); want the course list", b, err)
	}
}

// testGuideRequests runs the partner's guide's curl line per endpoint ("One curl line per
// endpoint", with -f: any error status fails) and its page past the last ("Pagination"),
// whose answer must be the one the guide prints under it, against the edge.
func (f *fixture) testGuideRequests(t *testing.T) {
	run := func(script string) string {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Env = append(os.Environ(), "CATALOGUE="+f.edge.URL+base, "TOKEN="+f.token)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the guide's lines failed: %v\n%s\n%s", err, script, out)
		}
		return string(out)
	}
	if out := run(guideBlock(t, "### One curl line per endpoint", "```sh")); strings.Count(out, "{") < 7 {
		t.Errorf("the guide's curl lines printed %.300s; want seven answers", out)
	}
	page := guideBlock(t, "## Pagination", "```sh")
	_, printed, ok := strings.Cut(page, "\n# ")
	if !ok {
		t.Fatalf("the guide's pagination example prints no answer after its curl line:\n%s", page)
	}
	if got := run(page); !jsonEqual(t, []byte(got), []byte(printed)) {
		t.Errorf("the guide's page past the last answered %s; the guide prints %s", got, printed)
	}
}

// guideBlock returns the first fenced block opened by fence after heading in the partner's
// guide, the Markdown of edge/openapi.json's info.description that the docs page renders.
func guideBlock(t *testing.T, heading, fence string) string {
	t.Helper()
	guide, err := docs.ReadGuide(filepath.Join(testkit.RepoRoot(t), "edge", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	block, err := docs.Block(guide, heading, fence)
	if err != nil {
		t.Fatalf("the guide (edge/openapi.json, info.description): %v", err)
	}
	return block
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}
