package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/scripts/testkit/services"
)

// TestGuideWebhookReceiverGo builds the partner's guide's Go receiver ("Receiving them in
// Go") as written, but for its port, and sends it deliveries as builder serve does
// (testReceiver).
func TestGuideWebhookReceiverGo(t *testing.T) {
	port := services.Port(t)
	program := guideBlock(t, "### Receiving them in Go", "```go")
	if strings.Count(program, `":3000"`) != 1 {
		t.Fatalf("the guide's Go receiver no longer listens on \":3000\":\n%s", program)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(strings.Replace(program, `":3000"`, fmt.Sprintf(`"127.0.0.1:%d"`, port), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "receiver")
	build := exec.Command(cmdtest.GoTool(), "build", "-o", bin, src)
	build.Dir = testkit.RepoRoot(t) // the module's go.mod has the Standard Webhooks library
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the guide's Go receiver does not build: %v\n%s\n%s", err, out, program)
	}
	testReceiver(t, port, bin)
}

// TestGuideWebhookReceiverNode runs the partner's guide's Node receiver ("Receiving them in
// Node") as written, but for its port, with the express and standardwebhooks that
// scripts/openapi/package.json pins, and sends it deliveries as builder serve does
// (testReceiver).
func TestGuideWebhookReceiverNode(t *testing.T) {
	port := services.Port(t)
	guideNamesFile(t, "### Receiving them in Node", "receiver.mjs")
	program := guideBlock(t, "### Receiving them in Node", "```js")
	if strings.Count(program, "app.listen(3000)") != 1 {
		t.Fatalf("the guide's Node receiver no longer listens on 3000:\n%s", program)
	}
	modules := nodeModules(t) // installs Node.js too when it is missing
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	// An ES module finds its packages in node_modules beside it or above, not on NODE_PATH.
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "receiver.mjs")
	listen := fmt.Sprintf(`app.listen(%d, "127.0.0.1")`, port)
	if err := os.WriteFile(src, []byte(strings.Replace(program, "app.listen(3000)", listen, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	testReceiver(t, port, node, src)
}

// testReceiver starts a partner's receiver (command, listening on port), and sends it
// catalogue.changed messages with builder/webhook's Sender, as builder serve does: signed
// with the endpoint's secret each is answered 204 and handed to revalidate, which logs its
// webhook-id and ids, or, for a message whose lists were left out ("truncated": more than
// 1,000 ids), that more changed than listed; signed with another secret it is answered 401
// and handed to nothing. The receivers ignored "truncated", and logged such a message as one
// that changed nothing. Neither may use the message's feed positions (data.feeds): the guide
// tells partners to read the feeds from their own, since a lost message's changes are
// before the next message's positions; the receivers once logged them as where to read.
// changed is what the receivers log of msg_guide: Go's log prints the lists [128] [4012
// 4013], Node's JSON.stringify [128] [4012,4013].
var changed = regexp.MustCompile(`changed: msg_guide \[128\] \[4012[ ,]4013\]`)

func testReceiver(t *testing.T, port int, command ...string) {
	t.Helper()
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	ctx, cancel := context.WithCancel(t.Context())
	receiver := exec.CommandContext(ctx, command[0], command[1:]...)
	receiver.Env = append(os.Environ(), "PARTNER_WEBHOOK_SECRET="+secret)
	receiver.Stdout, receiver.Stderr = logFile, logFile
	if err := receiver.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = receiver.Wait() })

	url := fmt.Sprintf("http://127.0.0.1:%d/hooks", port)
	body, err := webhook.Body(webhook.TypeChanged, time.Now(), webhook.Changed{Snapshot: "s", Courses: []int64{128}, Classes: []int64{4012, 4013}})
	if err != nil {
		t.Fatal(err)
	}
	sender := webhook.NewSender(webhook.Rules{AllowHTTP: true, AllowPrivate: true}, 10*time.Second)
	var res webhook.Result
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		res = sender.Send(t.Context(), url, webhook.Secrets{Current: secret}, webhook.Message{ID: "msg_guide", Body: body})
		if res.Status != 0 || time.Now().After(deadline) {
			break // answered, or never listening
		}
	}
	if res.Status != 204 {
		logged, _ := os.ReadFile(logFile.Name())
		t.Fatalf("a delivery signed with the endpoint's secret: %d %v, want 204\n%s", res.Status, res.Err, logged)
	}
	feeds := webhook.Feeds{Courses: "https://api.example.com/api/v2/public/feeds/courses?afterChangeNumber=7",
		Classes: "https://api.example.com/api/v2/public/feeds/classes?afterChangeNumber=7"}
	many := make([]int64, webhook.MaxIDs+1)
	for i := range many {
		many[i] = int64(i + 1)
	}
	manyBody, err := webhook.Body(webhook.TypeChanged, time.Now(), webhook.Changed{Snapshot: "s2", Courses: []int64{128}, Classes: many, Feeds: feeds})
	if err != nil {
		t.Fatal(err)
	}
	if res := sender.Send(t.Context(), url, webhook.Secrets{Current: secret}, webhook.Message{ID: "msg_many", Body: manyBody}); res.Status != 204 {
		t.Errorf("a delivery of more than 1,000 classes: %d %v, want 204", res.Status, res.Err)
	}
	other, _ := webhook.NewSecret()
	if res := sender.Send(t.Context(), url, webhook.Secrets{Current: other}, webhook.Message{ID: "msg_forged", Body: body}); res.Status != 401 {
		t.Errorf("a delivery signed with another secret: %d %v, want 401", res.Status, res.Err)
	}

	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		logged, _ := os.ReadFile(logFile.Name())
		if changed.MatchString(string(logged)) && strings.Contains(string(logged), "changed, more than listed: msg_many") {
			if strings.Contains(string(logged), "msg_forged") {
				t.Errorf("the forged delivery reached revalidate:\n%s", logged)
			}
			if strings.Contains(string(logged), "afterChangeNumber=7") {
				t.Errorf("revalidate used the message's feed positions rather than the partner's own:\n%s", logged)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("revalidate did not log both messages (msg_guide's ids, msg_many's truncation):\n%s", logged)
		}
	}
}
