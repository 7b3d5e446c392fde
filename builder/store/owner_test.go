package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnerHint: a write that failed for want of permission names the folder it failed in
// and its owner when that is not this process, looking up from a folder not yet created;
// a folder of its own, or another error, is left as it was.
func TestOwnerHint(t *testing.T) {
	root := t.TempDir()
	me := os.Geteuid()
	denied := fmt.Errorf("open x: %w", fs.ErrPermission)
	got := ownerHint(filepath.Join(root, "objects", "6f"), me+1, denied)
	want := fmt.Sprintf("open x: permission denied (%s belongs to uid %d and this process runs as uid %d: ", root, me, me+1)
	if !errors.Is(got, fs.ErrPermission) || !strings.HasPrefix(got.Error(), want) || !strings.Contains(got.Error(), "By hand on a unit's host") {
		t.Errorf("ownerHint as another user: %v\nwant it to begin %q and point at OPERATIONS", got, want)
	}
	if got := ownerHint(root, me, denied); got != denied {
		t.Errorf("ownerHint in a folder of its own: %v, want the error unchanged", got)
	}
	other := errors.New("disk full")
	if got := permissionHint(root, other); got != other {
		t.Errorf("permissionHint of another error: %v, want it unchanged", got)
	}
}
