package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// webhookConfig writes a configuration naming dbURL with D43's two permissions as given.
func webhookConfig(t *testing.T, dbURL string, allowHTTP, allowPrivate bool) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "catalogue.yaml")
	yaml := fmt.Sprintf("database:\n  url: %q\nwebhooks:\n  allow_http: %t\n  allow_private: %t\n  timeout: 2s\n", dbURL, allowHTTP, allowPrivate)
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", f}
}

// received is what a receiver got: each request's headers and body.
type received struct {
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
}

func (r *received) handler(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs, r.body = append(r.reqs, req), append(r.body, b)
	r.mu.Unlock()
}

// verify checks request i with the Standard Webhooks reference library and secret.
func (r *received) verify(i int, secret string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	return wh.Verify(r.body[i], r.reqs[i].Header)
}

// lastLine is the secret a command printed as its last line.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestWebhookCommands(t *testing.T) {
	dbURL := testkit.NewDatabase(t)
	c := webhookConfig(t, dbURL, true, true)
	for range 2 { // migrate twice: the second changes nothing
		mustRunCmd(t, append([]string{"migrate"}, c...)...)
	}
	var got received
	srv := httptest.NewServer(http.HandlerFunc(got.handler))
	defer srv.Close()

	out := mustRunCmd(t, append([]string{"webhook", "add", "--url", srv.URL + "/hooks", "--description", "partner site"}, c...)...)
	secret := lastLine(out)
	if !strings.HasPrefix(secret, "whsec_") || !strings.Contains(out, "webhook endpoint 1 added") {
		t.Fatalf("webhook add printed %q, want the id and then a whsec_ secret as the last line", out)
	}

	out = mustRunCmd(t, append([]string{"webhook", "test", "1"}, c...)...)
	if !strings.Contains(out, "answered 200 to catalogue.ping") {
		t.Errorf("webhook test printed %q", out)
	}
	if err := got.verify(0, secret); err != nil {
		t.Errorf("the ping does not verify with the secret add printed: %v", err)
	}
	if ct := got.reqs[0].Header.Get("Content-Type"); ct != "application/json" || got.reqs[0].Method != http.MethodPost {
		t.Errorf("ping sent as %s with Content-Type %q, want POST of application/json (D40)", got.reqs[0].Method, ct)
	}
	if !strings.Contains(string(got.body[0]), `"type":"catalogue.ping"`) {
		t.Errorf("ping body %s", got.body[0])
	}

	// After rotate-secret both secrets verify for 24 h: the partner switches at leisure.
	out = mustRunCmd(t, append([]string{"webhook", "rotate-secret", "1"}, c...)...)
	newSecret := lastLine(out)
	if !strings.HasPrefix(newSecret, "whsec_") || newSecret == secret {
		t.Fatalf("rotate-secret printed %q, want a new whsec_ secret as the last line", out)
	}
	mustRunCmd(t, append([]string{"webhook", "test", "1"}, c...)...)
	for _, s := range []string{secret, newSecret} {
		if err := got.verify(1, s); err != nil {
			t.Errorf("after rotate-secret a delivery does not verify with one of the secrets: %v", err)
		}
	}
	// The old secret stops signing once its 24 h are over.
	testkit.Exec(t, dbURL, "UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second'")
	mustRunCmd(t, append([]string{"webhook", "test", "1"}, c...)...)
	if err := got.verify(2, secret); err == nil {
		t.Error("24 h after rotate-secret the old secret still verifies")
	}
	if err := got.verify(2, newSecret); err != nil {
		t.Errorf("the new secret does not verify: %v", err)
	}
	testRotateTwice(t, c, &got, newSecret)

	list := mustRunCmd(t, append([]string{"webhook", "list"}, c...)...)
	if !strings.Contains(list, srv.URL+"/hooks") || !strings.Contains(list, "enabled") || !strings.Contains(list, "partner site") ||
		strings.Contains(list, secret) || strings.Contains(list, newSecret) {
		t.Errorf("webhook list = %q, want the URL, enabled, the description and never a secret", list)
	}

	// enable clears a disabled endpoint's record.
	testkit.Exec(t, dbURL, "UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'failing for 120h0m0s', consecutive_failures = 9")
	if list := mustRunCmd(t, append([]string{"webhook", "list"}, c...)...); !strings.Contains(list, "disabled") || !strings.Contains(list, "failing for 120h0m0s") {
		t.Errorf("webhook list of a disabled endpoint = %q", list)
	}
	mustRunCmd(t, append([]string{"webhook", "enable", "1"}, c...)...)
	if list := mustRunCmd(t, append([]string{"webhook", "list"}, c...)...); strings.Contains(list, "disabled") {
		t.Errorf("webhook list after enable = %q", list)
	}

	// An endpoint that answers otherwise fails the test command, naming the status.
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer failing.Close()
	mustRunCmd(t, append([]string{"webhook", "add", "--url", failing.URL}, c...)...)
	if _, _, err := runCmd(t, append([]string{"webhook", "test", "2"}, c...)...); err == nil || !strings.Contains(err.Error(), "answered 503") {
		t.Errorf("webhook test of an endpoint answering 503: %v, want an error naming 503", err)
	}

	mustRunCmd(t, append([]string{"webhook", "remove", "1"}, c...)...)
	for _, cmd := range []string{"remove", "enable", "test", "rotate-secret"} {
		if _, _, err := runCmd(t, append([]string{"webhook", cmd, "1"}, c...)...); err == nil || !strings.Contains(err.Error(), "no webhook endpoint with that id") {
			t.Errorf("webhook %s of a removed endpoint: %v, want no webhook endpoint with that id", cmd, err)
		}
	}
	if _, _, err := runCmd(t, append([]string{"webhook", "remove", "x"}, c...)...); err == nil || !strings.Contains(err.Error(), "ID must be a positive integer") {
		t.Errorf("webhook remove x: %v", err)
	}
	if _, _, err := runCmd(t, "webhook"); err == nil || !strings.Contains(err.Error(), "missing subcommand") {
		t.Errorf("webhook alone: %v", err)
	}
}

// TestWebhookAddRefuses holds add to D43 with the defaults: https and public addresses only,
// also when a name resolves to a private one.
func TestWebhookAddRefuses(t *testing.T) {
	dbURL := testkit.NewDatabase(t)
	strict := webhookConfig(t, dbURL, false, false)
	mustRunCmd(t, append([]string{"migrate"}, strict...)...)
	for _, tc := range []struct{ url, want string }{
		{"http://93.184.215.14/hooks", "the URL must be https:// (webhooks.allow_http permits http://)"},
		{"ftp://93.184.215.14/hooks", "the URL must be https://, not ftp://"},
		{"hooks.example", "is not an absolute URL"},
		{"https://127.0.0.1/hooks", "127.0.0.1 is not a public address"},
		{"https://10.1.2.3/hooks", "10.1.2.3 is not a public address"},
		{"https://192.168.0.10/hooks", "192.168.0.10 is not a public address"},
		{"https://169.254.169.254/latest", "169.254.169.254 is not a public address"},
		{"https://[::1]/hooks", "::1 is not a public address"},
		{"https://[fe80::1]/hooks", "fe80::1 is not a public address"},
		{"https://[fd00::5]/hooks", "fd00::5 is not a public address"},
		{"https://[::ffff:10.0.0.1]/hooks", "is not a public address"},
		{"https://localhost/hooks", "localhost resolves to"},
		{"https://user:pw@93.184.215.14/hooks", "must not hold a user name or password"},
		{"https://93.184.215.14:99999/hooks", "the port must be 1 to 65535 (got 99999)"},
		{"https://93.184.215.14:0/hooks", "the port must be 1 to 65535 (got 0)"},
	} {
		_, _, err := runCmd(t, append([]string{"webhook", "add", "--url", tc.url}, strict...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("webhook add --url %s: %v, want %q", tc.url, err, tc.want)
		}
	}
	if list := mustRunCmd(t, append([]string{"webhook", "list"}, strict...)...); strings.Count(list, "\n") != 1 {
		t.Errorf("refused endpoints were stored: %q", list)
	}
	// The two permissions lift exactly their rule.
	if _, _, err := runCmd(t, append([]string{"webhook", "add", "--url", "http://127.0.0.1/hooks"}, webhookConfig(t, dbURL, true, false)...)...); err == nil || !strings.Contains(err.Error(), "not a public address") {
		t.Errorf("allow_http alone let a loopback address in: %v", err)
	}
	if _, _, err := runCmd(t, append([]string{"webhook", "add", "--url", "http://127.0.0.1/hooks"}, webhookConfig(t, dbURL, false, true)...)...); err == nil || !strings.Contains(err.Error(), "must be https://") {
		t.Errorf("allow_private alone let http in: %v", err)
	}
	private := webhookConfig(t, dbURL, false, true)
	mustRunCmd(t, append([]string{"webhook", "add", "--url", "https://[::1]:8443/hooks"}, private...)...)
	// The same URL again would get every message twice.
	_, _, err := runCmd(t, append([]string{"webhook", "add", "--url", "https://[::1]:8443/hooks"}, private...)...)
	if want := "a webhook endpoint has that URL already: endpoint 1"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("webhook add of a URL added before: %v, want %q", err, want)
	}
	if list := mustRunCmd(t, append([]string{"webhook", "list"}, strict...)...); strings.Count(list, "\n") != 2 {
		t.Errorf("webhook list after one endpoint and one refused again:\n%s", list)
	}
}

// testRotateTwice: a second rotate-secret while the previous secret still signs is refused,
// since it would stop that secret at once, and a partner told it had 24 h would fail (the
// previous secret was overwritten: the first of three stopped verifying seconds after the
// second rotation). --force does it, and says the older secret stops now. secret is the
// endpoint's secret, with no previous one signing, and got its receiver.
func testRotateTwice(t *testing.T, c []string, got *received, secret string) {
	t.Helper()
	second := lastLine(mustRunCmd(t, append([]string{"webhook", "rotate-secret", "1"}, c...)...))
	_, _, err := runCmd(t, append([]string{"webhook", "rotate-secret", "1"}, c...)...)
	if want := "its previous secret signs until"; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("rotate-secret again within 24 h: %v, want a refusal saying %q and naming --force", err, want)
	}
	got.mu.Lock()
	n := len(got.body)
	got.mu.Unlock()
	mustRunCmd(t, append([]string{"webhook", "test", "1"}, c...)...)
	for _, s := range []string{secret, second} {
		if err := got.verify(n, s); err != nil {
			t.Errorf("after a refused second rotation a delivery does not verify with one of the two secrets: %v", err)
		}
	}
	out := mustRunCmd(t, append([]string{"webhook", "rotate-secret", "--force", "1"}, c...)...)
	third := lastLine(out)
	if !strings.HasPrefix(third, "whsec_") || !strings.Contains(out, "stops signing now") {
		t.Fatalf("rotate-secret --force printed %q, want a warning and a new secret", out)
	}
	mustRunCmd(t, append([]string{"webhook", "test", "1"}, c...)...)
	if got.verify(n+1, secret) == nil || got.verify(n+1, second) != nil || got.verify(n+1, third) != nil {
		t.Errorf("after rotate-secret --force: the oldest secret verifies %v, the two newest %v and %v; want only the two newest",
			got.verify(n+1, secret) == nil, got.verify(n+1, second) == nil, got.verify(n+1, third) == nil)
	}
}
