package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
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

// TestMisuseExits2: a misuse of the command line exits 2, as builder's does, and any other
// failure 1: it exited 1 for both, which a supervisor cannot tell from a failure at run time.
func TestMisuseExits2(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"extra-arg"}, {"--listen"}} {
		_, err := parseConfig(args, io.Discard, io.Discard)
		if got := exitCode(err); got != 2 {
			t.Errorf("edge %q: %v, exit %d, want 2", args, err, got)
		}
	}
	if got := exitCode(errors.New("listen tcp :80: bind: permission denied")); got != 1 {
		t.Errorf("a failure at run time: exit %d, want 1", got)
	}
}
