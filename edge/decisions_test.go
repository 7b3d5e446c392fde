package edge_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// citation finds a decision cited anywhere: "D17", "D24–D25" (both ends), "(D9)".
var citation = regexp.MustCompile(`\bD([1-9][0-9]?)\b`)

// decisionRow is a decision's row in DECISIONS.md's tables.
var decisionRow = regexp.MustCompile(`^\| (D[0-9]+) \| \S`)

// TestDecisionsCitedAreListed holds edge/DECISIONS.md to the repository: every decision
// cited in code, tests, templates, scripts or documents has its row, so that a maintainer who
// reads "D17" in a comment can look it up without the shared spec folder; and no number has
// two rows.
func TestDecisionsCitedAreListed(t *testing.T) {
	table, err := os.ReadFile("DECISIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for _, line := range strings.Split(string(table), "\n") {
		if m := decisionRow.FindStringSubmatch(line); m != nil {
			listed[m[1]]++
		}
	}
	for d, n := range listed {
		if n > 1 {
			t.Errorf("DECISIONS.md has %d rows for %s", n, d)
		}
	}
	cited := citedDecisions(t, "..")
	var missing []string
	for d, where := range cited {
		if listed[d] == 0 {
			missing = append(missing, d+" (cited in "+where+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("DECISIONS.md lacks %s", m)
	}
	if len(cited) < 40 {
		t.Errorf("found %d decisions cited in the repository; the walk from .. missed the code", len(cited))
	}
}

// citedDecisions maps each decision cited in the repository's text files under root to one
// file that cites it.
func citedDecisions(t *testing.T, root string) map[string]string {
	t.Helper()
	text := map[string]bool{".go": true, ".sql": true, ".sh": true, ".md": true, ".json": true,
		".yaml": true, ".lua": true, ".js": true, ".html": true, ".mk": true}
	cited := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "node_modules", "assets":
				return filepath.SkipDir
			}
			return nil
		}
		if !text[filepath.Ext(path)] && d.Name() != "Makefile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range citation.FindAllString(string(b), -1) {
			if _, ok := cited[m]; !ok {
				cited[m] = path
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cited
}
