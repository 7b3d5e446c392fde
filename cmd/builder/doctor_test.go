package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// seededLocal is a migrated and seeded database with a local store: the store, and the
// --config arguments of both.
func seededLocal(t *testing.T) (config.Store, []string) {
	st := testkit.NewLocalStore(t)
	c := []string{"--config", writeConfig(t, testkit.NewDatabase(t), st.URL, st.Endpoint)}
	mustRunCmd(t, append([]string{"migrate"}, c...)...)
	mustRunCmd(t, append([]string{"seed", "--courses", "6", "--classes", "40", "--registrations", "90", "--seed", "7"}, c...)...)
	return st, c
}

// TestDoctorCommand runs builder doctor on a migrated and seeded database: without a token
// it prints a ✗ with what to do and fails; with one every line is ✓, also in --json.
func TestDoctorCommand(t *testing.T) {
	_, c := seededLocal(t)

	out, _, err := runCmd(t, append([]string{"doctor"}, c...)...)
	if !errors.Is(err, errChecksFailed) || !strings.Contains(out, "✗ API tokens: no active API token") ||
		!strings.Contains(out, "\n    → builder token create --name") {
		t.Errorf("doctor without a token: %v\n%s", err, out)
	}

	mustRunCmd(t, append([]string{"token", "create", "--name", "kiosk"}, c...)...)
	out = mustRunCmd(t, append([]string{"doctor"}, c...)...)
	if strings.Contains(out, "✗") || !strings.Contains(out, "✓ API tokens: 1 active\n") || !strings.HasSuffix(out, " checks, 0 failed\n") {
		t.Errorf("doctor printed:\n%s", out)
	}
	out = mustRunCmd(t, append([]string{"doctor", "--json"}, c...)...)
	var r struct {
		OK     bool
		Checks []struct {
			Name string
			OK   bool
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.OK || len(r.Checks) < 20 {
		t.Errorf("doctor --json: %v\n%s", err, out)
	}
}

// TestDoctorMalformedPointer: for a current.json that is not a pointer, doctor's fix is one
// that works. It said "builder rollback rewrites it", which fails on the same malformed
// pointer, as run and status do; writing the pointer back naming the newest snapshot, as
// the fix says, lets the next run publish over it.
func TestDoctorMalformedPointer(t *testing.T) {
	st, c := seededLocal(t)
	mustRunCmd(t, append([]string{"token", "create", "--name", "kiosk"}, c...)...)
	mustRunCmd(t, append([]string{"run"}, c...)...)
	root := strings.TrimPrefix(st.URL, "file://")
	manifests, err := filepath.Glob(filepath.Join(root, "snapshots", "*.json"))
	if err != nil || len(manifests) != 1 {
		t.Fatalf("manifests after one run: %v %v", manifests, err)
	}
	if err := os.WriteFile(filepath.Join(root, "current.json"), []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, _, err := runCmd(t, append([]string{"doctor"}, c...)...)
	want := "✗ store pointer: read pointer: malformed current.json\n" +
		`    → only the builder writes current.json: write it back naming the newest snapshot under snapshots/ ({"snapshot": "ID"} for snapshots/ID.json), then builder run` + "\n"
	if !errors.Is(err, errChecksFailed) || !strings.Contains(out, want) {
		t.Fatalf("doctor with a malformed current.json: %v\n%s\nwant it to hold:\n%s", err, out, want)
	}
	id := strings.TrimSuffix(filepath.Base(manifests[0]), ".json")
	if err := os.WriteFile(filepath.Join(root, "current.json"), []byte(`{"snapshot": "`+id+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRunCmd(t, append([]string{"run"}, c...)...)
	if out := mustRunCmd(t, append([]string{"doctor"}, c...)...); !strings.Contains(out, "✓ store pointer: current.json names snapshot ") {
		t.Errorf("doctor after the fix and a run:\n%s", out)
	}
}
