//go:build linux

package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPutNamesTheFoldersOwner: a builder running as its own user, putting into a store where
// a command run as root made the object folders, says whose they are (an operator's review:
// every build of the service failed "permission denied" and said no more). It needs root, to
// make the folder root's and run the put as another user.
func TestPutNamesTheFoldersOwner(t *testing.T) {
	if os.Getenv("STORE_PUT_AS_NOBODY") != "" {
		err := NewLocal(os.Getenv("STORE_PUT_AS_NOBODY")).Put(context.Background(), "objects/6f/a.json", []byte("{}"))
		fmt.Print(err)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a folder another user cannot write")
	}
	root := openTempDir(t)
	if err := os.MkdirAll(filepath.Join(root, "objects", "6f"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := copyOfTheTest(t) // go test's own folder is root's alone
	cmd := exec.Command(bin, "-test.run=^TestPutNamesTheFoldersOwner$")
	cmd.Env = append(os.Environ(), "STORE_PUT_AS_NOBODY="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the put as uid 65534: %v\n%s", err, out)
	}
	want := "belongs to uid 0 and this process runs as uid 65534"
	if !strings.Contains(string(out), "permission denied") || !strings.Contains(string(out), want) {
		t.Errorf("the put as uid 65534 said:\n%s\nwant permission denied, saying %q", out, want)
	}
}

// openTempDir is a temporary folder that every user may enter (TempDir's is 0700).
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "store-owner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyOfTheTest copies this test binary where another user may run it.
func copyOfTheTest(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(openTempDir(t), "store.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
