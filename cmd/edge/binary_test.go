package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
)

// TestLinkerDropsUnusedMethods builds the edge and counts the exported methods it links of
// two types with many that the edge never calls: the S3 client's operations (the edge
// calls GetObject) and go-redis's commands (the shared rate limit runs one script). The
// linker leaves such methods out, unless a reachable function looks methods up by a name
// computed at run time (html/template's or text/template's Execute, reflect's
// MethodByName with a variable): then it keeps every exported method of every type that
// may be in an interface. html/template in edge/apidocs did: the edge's .text went from
// 9.4 to 18.1 MB (113 S3 operations, 621 commands), its RSS at ready up 5.1 MB of them.
func TestLinkerDropsUnusedMethods(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "edge")
	if out, err := exec.Command(cmdtest.GoTool(), "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(cmdtest.GoTool(), "tool", "nm", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, out)
	}
	for _, c := range []struct {
		what    string
		methods *regexp.Regexp
		max     int
	}{
		{"S3 operations", regexp.MustCompile(`(?m) T github\.com/aws/aws-sdk-go-v2/service/s3\.\(\*Client\)\.[A-Z]\w*$`), 10},
		{"go-redis commands", regexp.MustCompile(`(?m) T github\.com/redis/go-redis/v9\.cmdable\.[A-Z]\w*$`), 20},
	} {
		if n := len(c.methods.FindAll(out, -1)); n > c.max {
			t.Errorf("the edge links %d %s, want at most %d: does a reachable function look methods up by name (a template's Execute)?", n, c.what, c.max)
		}
	}
}

// TestEdgeLinksThreeBuilderPackages holds edge/README.md's claim (Packages) that the edge
// binary links, of the builder, only the published format, the store it is read from and
// the token format it verifies; test helpers under edge/ may use scripts/testkit.
func TestEdgeLinksThreeBuilderPackages(t *testing.T) {
	out, err := exec.Command(cmdtest.GoTool(), "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var got []string
	for _, p := range regexp.MustCompile(`(?m)^github\.com/trainingco/catalogue/builder/\S*$`).FindAllString(string(out), -1) {
		got = append(got, p[len("github.com/trainingco/catalogue/"):])
	}
	want := "builder/apitoken builder/snapshot builder/store"
	if slices.Sort(got); strings.Join(got, " ") != want {
		t.Errorf("the edge links %q of the builder, want %q (edge/README.md, Packages)", got, want)
	}
}
