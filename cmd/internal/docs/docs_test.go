package docs

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the repository, from this package's folder.
var root = filepath.Join("..", "..", "..")

// readmeMaxLines bounds the README: read in five minutes (issue 25), with the rest of the
// documentation where its readers look, linked from it.
const readmeMaxLines = 250

func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move what is not for a first read to where its readers look (see its links)", n, readmeMaxLines)
	}
}

// link matches a Markdown link or image, [text](target), target without spaces.
var link = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// TestLinksResolve: every relative link of every Markdown file of the repository names a
// file or folder that exists, and a #fragment names a heading of the Markdown file it
// points to (GitHub's anchors), so that a moved section or file breaks a test, not a reader.
func TestLinksResolve(t *testing.T) {
	docs, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for file, text := range docs {
		if file == Guide {
			continue // its links are read on the /docs page, relative to the API, not to this tree
		}
		for _, target := range links(text) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			p, frag, _ := strings.Cut(target, "#")
			dest := file
			if p != "" {
				dest = path.Join(path.Dir(file), p)
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
					t.Errorf("%s links to %s, which does not exist", file, target)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !anchors(docs[dest])[frag] {
				t.Errorf("%s links to %s: %s has no heading whose anchor is #%s", file, target, dest, frag)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d relative links; the README alone links to more", checked)
	}
}

// links returns the targets of the links of Markdown text outside its code.
func links(text string) []string {
	var targets []string
	for line, inBlock := range markdownLines(text) {
		if inBlock {
			continue
		}
		line = span.ReplaceAllString(line, "")
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
	}
	return targets
}

// anchors returns the anchors GitHub gives the headings of Markdown text: lower case,
// punctuation but hyphens and underscores removed, spaces as hyphens, repeats numbered.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !strings.ContainsRune("–—’“”…·", r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// topLevel is what the repository holds at its top, a fixed choice of its owners: every
// other file lives inside one of these folders.
var topLevel = []string{".ci", ".gitignore", "Makefile", "README.md", "builder", "cmd", "config", "edge", "go.mod", "go.sum", "scripts", "templates"}

// TestTopLevel: the repository's tracked files are all under topLevel. A 16.5 MB bench
// binary was committed at the top by accident and carried by every clone since.
func TestTopLevel(t *testing.T) {
	cmd := exec.Command("git", "-c", "safe.directory=*", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if top, _, _ := strings.Cut(f, "/"); !slices.Contains(topLevel, top) {
			t.Errorf("%s is outside the top level the repository allows (%s)", f, strings.Join(topLevel, ", "))
		}
	}
}
