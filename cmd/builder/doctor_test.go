package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestDoctorCommand runs builder doctor on a migrated and seeded database: without a token
// it prints a ✗ with what to do and fails; with one every line is ✓, also in --json.
func TestDoctorCommand(t *testing.T) {
	st := testkit.NewLocalStore(t)
	conf := writeConfig(t, testkit.NewDatabase(t), st.URL, st.Endpoint)
	c := []string{"--config", conf}
	mustRunCmd(t, append([]string{"migrate"}, c...)...)
	mustRunCmd(t, append([]string{"seed", "--courses", "6", "--classes", "40", "--registrations", "90", "--seed", "7"}, c...)...)

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
