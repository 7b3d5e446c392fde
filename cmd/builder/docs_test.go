package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/cmd/internal/docs"
)

// TestCommandsReference holds the commands' reference in builder/README.md (the text block
// under "## Commands") to what builder help prints, so that neither can drift: a command
// added, renamed or described anew changes the help, and the reference must follow.
func TestCommandsReference(t *testing.T) {
	var help bytes.Buffer
	usage(&help)
	b, err := os.ReadFile("../../builder/README.md")
	if err != nil {
		t.Fatal(err)
	}
	block, err := docs.Block(string(b), "## Commands", "```text")
	if err != nil {
		t.Fatalf("builder/README.md: %v", err)
	}
	block += "\n"
	if block != help.String() {
		t.Errorf("builder/README.md's commands reference is not what builder help prints; paste the output of\n"+
			"go run ./cmd/builder help\n--- the README's block:\n%s--- builder help:\n%s", block, help.String())
	}
}

// TestDocsNameOnlyCommands: every `builder COMMAND` that the documentation shows as code (an
// inline code span or a fenced block: the README, the folder READMEs, the operator's
// reference, the decisions, the partner's guide in openapi.json) names a command that
// builder help lists, so that no page tells a reader to run a command that does not exist.
func TestDocsNameOnlyCommands(t *testing.T) {
	known := map[string]bool{}
	groups := map[string]bool{}
	for _, c := range commands() {
		known[c.name] = true
		if group, _, ok := strings.Cut(c.name, " "); ok {
			groups[group] = true
		}
	}
	// A word followed by a slash is a path (bin/builder bin/edge), not a command.
	mention := regexp.MustCompile(`(?:^|[\s/(])builder ([a-z][a-z-]*)(/)?(?: ([a-z][a-z-]*))?`)
	files, err := docs.Files(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d documentation files, want the README, the folder READMEs and the others", len(files))
	}
	named := 0
	for path, text := range files {
		for _, code := range docs.Code(text) {
			for _, m := range mention.FindAllStringSubmatch(code, -1) {
				if m[2] == "/" {
					continue
				}
				named++
				name := m[1]
				if groups[name] && m[3] != "" {
					name += " " + m[3]
				}
				if !known[name] && !(groups[name] && m[3] == "") {
					t.Errorf("%s names %q, which is no command of builder help", path, strings.TrimSpace(m[0]))
				}
			}
		}
	}
	if named < 20 {
		t.Errorf("the documentation names builder commands %d times in code; the reader is not found", named)
	}
}
