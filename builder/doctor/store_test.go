package doctor

import (
	"context"
	"os"
	"testing"

	"github.com/trainingco/catalogue/builder/store"
)

// TestStoreCheckLeavesNoTrace: the store check writes a probe and deletes it; a folder store
// is left as it was, with no empty folder the probe was written in (the README says doctor
// leaves no trace).
func TestStoreCheckLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	checks := checkStore(context.Background(), store.Options{URL: "file://" + dir})
	if len(checks) == 0 || !checks[0].OK {
		t.Fatalf("store checks: %+v, want the store writable", checks)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the store after the check holds %s, want nothing", e.Name())
	}
}
