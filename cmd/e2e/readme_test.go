package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trainingco/catalogue/cmd/internal/docs"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/scripts/testkit/services"
)

// readmeWithin bounds the README's first deployment, make build included.
const readmeWithin = 5 * time.Minute

// TestREADME runs the README's two blocks of commands as a reader would: the operator's
// first deployment (make build, migrate, seed, a token, doctor, builder serve and the edge in
// the background, the readiness probe), then the partner's first request against the edge it
// started, with the token it printed, which must answer popular's three courses. The export
// lines are the reader's to fill: the test drops them and sets the variables itself (a
// database of its own, a folder store, a free port for the README's :8080).
func TestREADME(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CATALOGUE_TEST_REQUIRE") != "" {
				t.Fatalf("the README's lines need %s: %v", tool, err)
			}
			t.Skipf("the README's lines need %s: %v", tool, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	deploy := readmeLines(t, string(readme), "## An operator's first deployment")
	request := readmeLines(t, string(readme), "## A partner's first request")
	if !strings.Contains(deploy, "localhost:8080") || !strings.Contains(deploy, "bin/edge &") {
		t.Fatalf("the first deployment's lines no longer start an edge on :8080:\n%s", deploy)
	}

	port := services.Port(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	env := append(os.Environ(),
		"CATALOGUE_DATABASE_URL="+testkit.NewDatabase(t),
		"CATALOGUE_STORE_URL="+testkit.NewLocalStore(t).URL,
		"CATALOGUE_EDGE_LISTEN="+addr)
	out := runREADME(t, strings.ReplaceAll(deploy, "localhost:8080", addr), env)
	if !strings.Contains(out, `"status":"ok"`) {
		t.Fatalf("the first deployment's readiness probe did not answer ok:\n%s", out)
	}
	token := regexp.MustCompile(`(?m)^pcat_\S+$`).FindString(out)
	if token == "" {
		t.Fatalf("builder token create printed no token:\n%s", out)
	}

	popular := runREADME(t, request, append(os.Environ(), "CATALOGUE=http://"+addr+base, "TOKEN="+token))
	var courses []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(popular), &courses); err != nil || len(courses) != 3 || courses[0].ID == 0 {
		t.Errorf("the partner's first request answered %.300s (%v); want popular's three courses", popular, err)
	}
}

// readmeLines returns the first sh block after heading in the README without its export
// lines (the values the reader fills in).
func readmeLines(t *testing.T, readme, heading string) string {
	t.Helper()
	block, err := docs.Block(readme, heading, "```sh")
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(l, "export ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// runREADME runs lines in bash from the repository's root, as a reader in a clone would, in
// a process group of their own that the test ends with the processes they left running, and
// returns what they printed.
func runREADME(t *testing.T, lines string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), readmeWithin)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", lines)
	cmd.Dir = testkit.RepoRoot(t)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: the processes left in the background hold their stdout open, and
	// a pipe would make Wait wait for them.
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	t.Cleanup(func() { stopGroup(t, cmd) })
	err = cmd.Run()
	printed, _ := os.ReadFile(out.Name())
	if err != nil {
		t.Fatalf("%s\n%v\n%s", lines, err, printed)
	}
	return string(printed)
}

// stopGroup sends SIGTERM to the process group cmd started (builder serve and the edge in the
// background), and SIGKILL if it is still there 30 seconds later.
func stopGroup(t *testing.T, cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	t.Errorf("the README's background processes were still running 30 s after SIGTERM")
}
