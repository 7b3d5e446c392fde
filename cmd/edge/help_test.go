package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"testing"

	"github.com/trainingco/catalogue/cmd/internal/docs"
)

// TestHelpReference holds the edge command's reference in edge/README.md (the text block
// under "## The edge command") to what edge -h prints, so that neither can drift; the help
// goes to stdout alone (seen failing: it went to stderr as well, shown twice).
func TestHelpReference(t *testing.T) {
	var out, errOut bytes.Buffer
	if _, err := parseConfig([]string{"-h"}, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("edge -h: %v, want flag.ErrHelp", err)
	}
	if errOut.Len() > 0 {
		t.Errorf("edge -h wrote to stderr too, so a terminal shows the help twice:\n%s", errOut.String())
	}
	b, err := os.ReadFile("../../edge/README.md")
	if err != nil {
		t.Fatal(err)
	}
	block, err := docs.Block(string(b), "## The edge command", "```text")
	if err != nil {
		t.Fatalf("edge/README.md: %v", err)
	}
	block += "\n"
	if block != out.String() {
		t.Errorf("edge/README.md's reference is not what edge -h prints; paste the output of\n"+
			"go run ./cmd/edge -h 2>/dev/null\n--- the README's block:\n%s--- edge -h:\n%s", block, out.String())
	}
}
