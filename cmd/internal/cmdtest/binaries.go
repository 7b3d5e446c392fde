package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The module path of the commands built by Binaries.
const (
	builderPkg = "github.com/trainingco/catalogue/cmd/builder"
	edgePkg    = "github.com/trainingco/catalogue/cmd/edge"
)

// mainRan is set by Main: Binaries refuses to build without it, as nothing would then
// remove the two 40 MB binaries, and every test run of such a package left them in the
// temporary folder (101 of them filled a CI machine's disk until MinIO refused writes).
var mainRan bool

// built holds the result of the one build per test process.
var built struct {
	once          sync.Once
	dir           string
	builder, edge string
	err           error
}

// Binaries builds cmd/builder and cmd/edge once per test process and returns their paths.
// A failed build fails every test that asks for them, with the compiler's output.
func Binaries(t testing.TB) (builder, edge string) {
	t.Helper()
	if !mainRan {
		t.Fatal("cmdtest: the binaries are built only for a package whose TestMain calls cmdtest.Main, which removes them: add func TestMain(m *testing.M) { cmdtest.Main(m) }")
	}
	built.once.Do(build)
	if built.err != nil {
		t.Fatalf("build the binaries: %v", built.err)
	}
	return built.builder, built.edge
}

// build runs go build for both commands into a fresh temporary folder.
func build() {
	dir, err := os.MkdirTemp("", "cmdtest-bin-")
	if err != nil {
		built.err = fmt.Errorf("make folder: %w", err)
		return
	}
	built.dir = dir
	// One command for both: go links them in parallel.
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceEnabled {
		// The binaries then report their own data races: a race makes them exit 66, which
		// the tests see as a failed command or an edge that did not stop cleanly.
		args = append(args, "-race")
	}
	cmd := exec.Command(GoTool(), append(args, builderPkg, edgePkg)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		built.err = fmt.Errorf("go build: %w\n%s", err, out)
		return
	}
	built.builder, built.edge = filepath.Join(dir, "builder"), filepath.Join(dir, "edge")
}

// GoTool returns the go command: the one on PATH, else the one in GOROOT.
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}

// Main runs the tests of a package and then removes the binaries Binaries built, so that
// no test process leaves them behind. Call it from TestMain.
func Main(m *testing.M) {
	mainRan = true
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
