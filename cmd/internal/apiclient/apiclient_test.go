package apiclient_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/trainingco/catalogue/cmd/internal/docs"
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

// TestGuideExampleCompiles compiles the partner's guide's Go example for this client (its go
// block under "Generating a client") as the body of a function given ctx, token and baseURL,
// against the committed client: an example calling a method or type the client lacks fails.
func TestGuideExampleCompiles(t *testing.T) {
	guide, err := docs.ReadGuide("../../../edge/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	example, err := docs.Block(guide, "## Generating a client", "```go")
	if err != nil {
		t.Fatalf("the guide (edge/openapi.json): %v", err)
	}
	src := "package main\n\nimport (\n\t\"context\"\n\t\"net/http\"\n\n\t\"github.com/trainingco/catalogue/cmd/internal/apiclient\"\n)\n\n" +
		"func main() {}\n\nfunc example(ctx context.Context, token, baseURL string) {\n" + example + "\n}\n"
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// The example imports this internal package, so it is compiled as if it were a folder
	// below it (an overlay: nothing is written into the tree).
	here, err := filepath.Abs(filepath.Join("guideexample", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {here: file}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", os.DevNull, "./guideexample")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the guide's Go example does not compile against the client: %v\n%s\n%s", err, msg, src)
	}
}
