package apiclient_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGenerated runs the go:generate line of doc.go, the pinned oapi-codegen on
// edge/openapi.json, into a temporary file and checks that it is the committed client: a
// document that oapi-codegen refuses (as v2.8.2 refused the colliding name Date) fails here,
// and so does a document changed without regenerating.
func TestGenerated(t *testing.T) {
	out := filepath.Join(t.TempDir(), "apiclient.gen.go")
	cmd := exec.Command("go", "tool", "oapi-codegen", "-generate", "types,client", "-package", "apiclient",
		"-o", out, "../../../edge/openapi.json")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("apiclient.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("apiclient.gen.go is not what oapi-codegen makes of edge/openapi.json: run go generate ./cmd/internal/apiclient")
	}
}
