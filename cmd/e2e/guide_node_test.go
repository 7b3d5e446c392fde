package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trainingco/catalogue/cmd/internal/docs"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// testGuideNode runs the partner's guide's Node.js lines that mirror the courses feed
// ("Mirroring the courses feed in Node", the js block) as written, with a line added after them that prints what
// they hold: every course of the feed, each the course read's document.
func (f *fixture) testGuideNode(t *testing.T) {
	f.checkNodeMirror(t, f.runGuideNode(t, f.token, time.Minute))
}

// runGuideNode runs the guide's Node.js mirror of the courses feed with token, for at most
// limit, and returns what it printed: the copy it holds.
func (f *fixture) runGuideNode(t *testing.T, token string, limit time.Duration) []byte {
	t.Helper()
	const heading = "### Mirroring the courses feed in Node"
	guideNamesFile(t, heading, "mirror.mjs")
	script := guideBlock(t, heading, "```js") + "\nconsole.log(JSON.stringify(Object.fromEntries(copy)));\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mirror.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		nodeModules(t) // scripts/openapi.sh installs Node.js when it is missing
		if node, err = exec.LookPath("node"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), limit) // a mirror that never ends
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "mirror.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CATALOGUE="+f.edge.URL+base, "TOKEN="+token)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("the guide's Node.js mirror: %v\n%s%s", err, out, stderr)
	}
	return out
}

// guideNamesFile fails t unless the guide's text under heading, before its code, names the
// file its program is saved as, name, as the test runs it: the Node programs have top-level
// awaits, which an ES module may have and mirror.js under CommonJS (Node 18's default, or
// "type": "commonjs") may not. The guide said only "Node 18 or later".
func guideNamesFile(t *testing.T, heading, name string) {
	t.Helper()
	guide, err := docs.ReadGuide(filepath.Join(testkit.RepoRoot(t), "edge", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(guide, "\n"+heading+"\n")
	text, _, _ := strings.Cut(section, "\n```")
	if !strings.Contains(text, "`"+name+"`") {
		t.Errorf("the guide's %q does not name its program `%s`:\n%s", heading, name, text)
	}
}

// checkNodeMirror checks the copy the guide's Node.js mirror printed: every course of the
// feed, each the course read's document.
func (f *fixture) checkNodeMirror(t *testing.T, out []byte) {
	t.Helper()
	var copied map[string]json.RawMessage
	if err := json.Unmarshal(out, &copied); err != nil {
		t.Fatalf("the guide's Node.js mirror printed %.300s: %v", out, err)
	}
	want := f.updatedIDs(t, "/public/feeds/courses")
	got := map[int64]bool{}
	for id, doc := range copied {
		n, _ := strconv.ParseInt(id, 10, 64)
		got[n] = true
		if r := f.get(t, "/public/course/"+id); r.StatusCode != 200 || !jsonEqual(t, doc, r.Data) {
			t.Errorf("the copy of course %s is %s; the course read gives %d %s", id, doc, r.StatusCode, r.Data)
		}
	}
	if len(want) == 0 {
		t.Fatal("the courses feed holds no course")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the copy's courses differ from the feed's (-feed +copy):\n%s", diff)
	}
}

// updatedIDs walks a feed from path to its last page and returns the ids whose latest item
// is updated.
func (f *fixture) updatedIDs(t *testing.T, path string) map[int64]bool {
	t.Helper()
	ids := map[int64]bool{}
	for range 1000 {
		var page struct {
			Next  string
			Items []struct {
				State string
				ID    int64
			}
		}
		if err := json.Unmarshal(f.get(t, path).Data, &page); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		for _, it := range page.Items {
			ids[it.ID] = it.State == "updated"
		}
		if len(page.Items) == 0 {
			break
		}
		path = strings.TrimPrefix(page.Next, f.edge.URL+base)
	}
	for id, updated := range ids {
		if !updated {
			delete(ids, id)
		}
	}
	return ids
}
