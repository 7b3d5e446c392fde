package edge_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// TestGuideErrorTable holds the partner's guide's error table (openapi.json's
// info.description, Errors), which partners code against, to what the edge answers: every body a request below gets is in
// the table's row for its status, and every body the table lists is got here or pinned by
// the test named beside it.
func TestGuideErrorTable(t *testing.T) {
	table := guideErrorTable(t)
	env := newAPIEnv(t)
	if got := env.send(t, apiCall{server: srvLimited, target: "/api/v2/public/popular", auth: "token"}); got.Code != 200 {
		t.Fatalf("first request to the limited server: status %d", got.Code)
	}
	calls := []apiCall{
		{target: "/api/v2/public/classes?limit=abc", auth: "token", status: 400},
		{target: "/api/v2/public/classes?page=x", auth: "token", status: 400},
		{target: "/api/v2/public/feeds/classes?afterChangeNumber=1e3", auth: "token", status: 400},
		{target: "/api/v2/public/courses?type=Bogus", auth: "token", status: 400},
		{target: "/api/v2/public/classes?page=2%", auth: "token", status: 400}, // a broken escape meets its parameter's rule (D51)
		{target: "/api/v2/public/courses", status: 401},
		{target: "/api/v2/public/course/999", auth: "token", status: 404},
		{target: "/api/v2/public/class/999", auth: "token", status: 404},
		{target: "/api/v2/public/nothing-here", auth: "token", status: 404},
		{target: "/api/v2/public/courses", method: http.MethodPost, auth: "token", status: 405},
		{target: "/api/v2/public/courses", server: srvLimited, auth: "token", status: 429},
		{target: "/api/v2/public/popular", auth: "token", header: map[string]string{"X-Padding": strings.Repeat("p", 33<<10)}, status: 431}, // D46
		{target: "/api/v2/public/classes?start=2027-01-31", auth: "token", status: 500},
		{target: "/api/v2/public/classes?end=13-01-2027", auth: "token", status: 500},
		{target: "/api/v2/public/classes?date=tomorrow", auth: "token", status: 500},
		{target: "/api/v2/public/courses", server: srvNoSnap, auth: "token", status: 503},
		{target: "/api/v2/public/classes", server: srvBadSearch, auth: "token", status: 503},
	}
	elsewhere := map[string]string{
		`{"message":"The token list is not loaded yet. Try again shortly."}`:                                      "TestTokensNeverLoaded",
		`{"message":"The student's registration details are temporarily unavailable. Please try again shortly."}`: "TestJWTReplicaDown",
	}
	got := map[int]map[string]bool{}
	for _, c := range calls {
		rec := env.send(t, c)
		body := compactJSON(rec.Body.Bytes())
		if rec.Code != c.status {
			t.Errorf("%s %s: status %d %s, want %d", c.methodOr(), c.target, rec.Code, body, c.status)
			continue
		}
		if !table[c.status][body] {
			t.Errorf("%s %s: %d %s, which the guide's row for %d does not list", c.methodOr(), c.target, c.status, body, c.status)
		}
		if got[c.status] == nil {
			got[c.status] = map[string]bool{}
		}
		got[c.status][body] = true
	}
	for status, bodies := range table {
		for body := range bodies {
			if !got[status][body] && elsewhere[body] == "" {
				t.Errorf("the guide lists %s for %d, which no request got", body, status)
			}
		}
	}
}

// TestGuideWebhookSample holds the guide's sample delivery to one moment, by the rules that
// make its values: the snapshot id is its build's start (snapshot.NewID); the message is
// queued after the snapshot is published (its body's timestamp); each attempt is signed at
// its own time (webhook-timestamp, Unix seconds), after the message is queued; the feeds'
// position before the change is the previous publication's last change number, a wall
// clock in microseconds that it waited out before its pointer (builder/publish/feed.go), so
// before this build started (the hour and the minutes below bound the sample, not the
// builder). The sample once sent its delivery 13 days after its message.
func TestGuideWebhookSample(t *testing.T) {
	_, section, _ := strings.Cut(guide(t), "\n## Webhooks: told when something changes\n")
	_, sample, ok := strings.Cut(section, "\n```http\n")
	sample, _, _ = strings.Cut(sample, "\n```")
	head, body, _ := strings.Cut(sample, "\n\n")
	if !ok || body == "" {
		t.Fatalf("the guide's webhooks section has no sample delivery (an http block, headers and body):\n%s", sample)
	}
	var signed time.Time
	for line := range strings.SplitSeq(head, "\n") {
		if v, ok := strings.CutPrefix(line, "webhook-timestamp: "); ok {
			sec, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("webhook-timestamp %q: %v", v, err)
			}
			signed = time.Unix(sec, 0).UTC()
		}
	}
	var msg struct {
		Timestamp string
		Data      struct {
			Snapshot string
			Feeds    struct{ Courses, Classes string }
		}
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatalf("the sample's body: %v\n%s", err, body)
	}
	queued, err := time.Parse(time.RFC3339Nano, msg.Timestamp)
	if err != nil {
		t.Fatalf("the sample's timestamp: %v", err)
	}
	built, ok := snapshot.IDTime(msg.Data.Snapshot)
	if !ok {
		t.Fatalf("the sample's snapshot %q is not a snapshot id", msg.Data.Snapshot)
	}
	after := map[string]int64{}
	for feed, u := range map[string]string{"courses": msg.Data.Feeds.Courses, "classes": msg.Data.Feeds.Classes} {
		_, v, _ := strings.Cut(u, "?afterChangeNumber=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("the sample's %s feed %q: no afterChangeNumber: %v", feed, u, err)
		}
		after[feed] = n
	}
	if after["courses"] != after["classes"] {
		t.Errorf("the sample's feeds are at %d and %d: one position before the change, for both", after["courses"], after["classes"])
	}
	position := time.UnixMicro(after["courses"]).UTC()
	t.Logf("position %s, built %s, queued %s, signed %s", position.Format(time.RFC3339Nano), built.Format(time.RFC3339Nano), queued.Format(time.RFC3339Nano), signed)
	if !position.Before(built) || built.Sub(position) > time.Hour {
		t.Errorf("the feeds' position %d is %s: it should be within the hour before the build, %s", after["courses"], position, built)
	}
	if queued.Before(built) || queued.Sub(built) > time.Minute {
		t.Errorf("the message was queued at %s: it should be within the minute after the build, %s", queued, built)
	}
	if signed.Before(queued.Truncate(time.Second)) || signed.Sub(queued) > time.Minute {
		t.Errorf("webhook-timestamp %s: it should be within the minute after the message was queued, %s", signed, queued)
	}
}

// guideErrorTable returns the bodies of the guide's error table by status, compacted.
func guideErrorTable(t *testing.T) map[int]map[string]bool {
	t.Helper()
	_, section, ok := strings.Cut(guide(t), "\n## Errors\n")
	if !ok {
		t.Fatal("the guide (openapi.json, info.description) has no ## Errors section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile(`(?m)^\| ([0-9]{3}) \|.*\| (.*) \|$`)
	body := regexp.MustCompile(`\x60(\{[^\x60]*\})\x60`) // \x60: a backquote
	table := map[int]map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		status, _ := strconv.Atoi(m[1])
		table[status] = map[string]bool{}
		for _, bm := range body.FindAllStringSubmatch(m[2], -1) {
			table[status][compactJSON([]byte(bm[1]))] = true
		}
	}
	if len(table) < 8 {
		t.Fatalf("the guide's error table has rows for %d statuses, want 400, 401, 404, 405, 429, 431, 500 and 503", len(table))
	}
	return table
}

// guide returns the partner's guide: openapi.json's info.description, Markdown.
func guide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct{ Description string } `json:"info"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Info.Description
}

// compactJSON returns b without insignificant space, or as it is when it is not JSON.
func compactJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(bytes.TrimSpace(b))
	}
	return out.String()
}
