package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleHoldsOnlyTheRepository checks that ./..., which go vet, go test and staticcheck
// walk, is the repository's code and none of the tools installed into bin/: make test
// installs the OpenAPI tools' npm packages there before the tests run, and one of them
// (flatted) carries Go code, which scripts/openapi.sh keeps out with a go.mod of its own.
func TestModuleHoldsOnlyTheRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	bin := filepath.Join(root, "bin") + string(filepath.Separator)
	for dir := range strings.Lines(string(out)) {
		if dir = strings.TrimSpace(dir); strings.HasPrefix(dir, bin) {
			t.Errorf("./... holds %s, which is under bin/, not the repository's code", dir)
		}
	}
}
