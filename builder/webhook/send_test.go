package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"93.184.215.14", true}, {"8.8.8.8", true}, {"2606:4700:4700::1111", true},
		{"127.0.0.1", false}, {"127.8.9.10", false}, {"10.0.0.1", false}, {"172.16.5.4", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false}, {"255.255.255.255", false}, {"224.0.0.1", false},
		{"::1", false}, {"::", false}, {"fe80::1", false}, {"fd12:3456::1", false}, {"ff02::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false}, {"::ffff:93.184.215.14", true},
		{"64:ff9b::a00:1", false}, {"2001:db8::1", false}, {"2002:a00:1::", false},
		// IPv4-compatible (::/96) and IPv4-translated (SIIT, ::ffff:0:0:0/96) forms reach the
		// IPv4 address where a host routes or translates them: outside 2000::/3, the only
		// IPv6 range that holds public unicast addresses.
		{"::127.0.0.1", false}, {"::10.0.0.1", false}, {"::ffff:0:127.0.0.1", false}, {"::ffff:0:a00:1", false},
		{"4000::1", false}, {"3fff:ffff::1", true}, {"3fff::1", false}, // 3fff::/20: documentation (RFC 9637)
	} {
		if got := Public(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Public(%s) = %t, want %t", tc.ip, got, tc.want)
		}
	}
}

// fakeResolver answers names from a map: CheckURL's DNS without a DNS server.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ips, ok := f[host]; ok {
		return ips, nil
	}
	return nil, errors.New("no such host")
}

// TestCheckURLThroughDNS refuses a name when any of its addresses is not public.
func TestCheckURLThroughDNS(t *testing.T) {
	r := Rules{Resolver: fakeResolver{
		"public.example":   {netip.MustParseAddr("93.184.215.14")},
		"private.example":  {netip.MustParseAddr("10.0.0.7")},
		"mixed.example":    {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("fe80::1")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"v6local.example":  {netip.MustParseAddr("fd00::1")},
	}}
	ctx := context.Background()
	if err := r.CheckURL(ctx, "https://public.example/hooks"); err != nil {
		t.Errorf("public name refused: %v", err)
	}
	for _, host := range []string{"private.example", "mixed.example", "metadata.example", "v6local.example"} {
		if err := r.CheckURL(ctx, "https://"+host+"/hooks"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), host+" resolves to") {
			t.Errorf("CheckURL(%s) = %v, want a refusal naming the address it resolves to", host, err)
		}
	}
	r.AllowPrivate = true
	if err := r.CheckURL(ctx, "https://private.example/hooks"); err != nil {
		t.Errorf("allow_private refused a private name: %v", err)
	}
}

var testSecrets = Secrets{Current: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}

// TestSendRefusesAtDelivery checks the address actually connected to: an endpoint added
// while a name pointed elsewhere, or under allow_private since turned off, is refused at
// the connection, and nothing reaches it.
func TestSendRefusesAtDelivery(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	s := NewSender(Rules{AllowHTTP: true}, 2*time.Second)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	msg := Message{ID: "msg_1", Body: []byte(`{}`)}
	for _, u := range []string{srv.URL, "http://localhost" + port, "http://[::1]" + port} {
		res := s.Send(context.Background(), u, testSecrets, msg)
		if !errors.Is(res.Err, ErrRefused) {
			t.Errorf("Send(%s) = %v, want a refusal of the address", u, res.Err)
		}
	}
	if res := NewSender(Rules{AllowPrivate: true}, 2*time.Second).Send(context.Background(), srv.URL, testSecrets, msg); !errors.Is(res.Err, ErrRefused) {
		t.Errorf("Send over http without allow_http = %v, want a refusal", res.Err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached a refused endpoint", n)
	}
}

// TestSendLimits: redirects are not followed, answers (headers, body) are read at most
// 64 KiB, a slow endpoint fails at the timeout, and only a 2xx is success.
func TestSendLimits(t *testing.T) {
	var redirected atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { redirected.Add(1) }))
	defer target.Close()
	var sent atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 32<<10))
		for range 3200 { // 100 MiB if all were read
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/huge-headers", func(w http.ResponseWriter, r *http.Request) {
		for i := range 100 { // 100 KiB of headers
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("x", 1<<10))
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(1500 * time.Millisecond):
		}
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh, _ := standardwebhooks.NewWebhook(testSecrets.Current)
		if err := wh.Verify(body, r.Header); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s := NewSender(Rules{AllowHTTP: true, AllowPrivate: true}, 500*time.Millisecond)
	msg := Message{ID: "msg_2", Body: []byte(`{"type":"catalogue.ping"}`)}
	ctx := context.Background()

	if res := s.Send(ctx, srv.URL+"/ok", testSecrets, msg); res.Err != nil || res.Status != 200 {
		t.Errorf("a verified delivery: %d %v", res.Status, res.Err)
	}
	if res := s.Send(ctx, srv.URL+"/redirect", testSecrets, msg); res.Err == nil || res.Status != 307 || redirected.Load() != 0 {
		t.Errorf("a redirect: status %d, %v, %d requests at its target; want a 307 failure and none", res.Status, res.Err, redirected.Load())
	}
	res := s.Send(ctx, srv.URL+"/huge", testSecrets, msg)
	if res.Err != nil {
		t.Errorf("a 200 with a huge body: %v, want success (the status counts)", res.Err)
	}
	// The server may have written into socket buffers ahead of the reader, not 100 MiB.
	if n := sent.Load(); n > 16<<20 {
		t.Errorf("the server could write %d bytes: the answer was read past its bound", n)
	}
	// Headers are read up to the same bound (Go's default is 10 MB): past it, a failure.
	if res := s.Send(ctx, srv.URL+"/huge-headers", testSecrets, msg); res.Err == nil {
		t.Errorf("a 200 with 100 KiB of headers: %d, want a failure (headers past 64 KiB)", res.Status)
	}
	res = s.Send(ctx, srv.URL+"/slow", testSecrets, msg)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "no answer within the timeout") || res.Duration > 2*time.Second {
		t.Errorf("a slow endpoint: %v after %v, want a timeout after 500ms", res.Err, res.Duration)
	}
}

// TestReason: what an endpoint writes into a failure is stored and shown without control
// characters, as UTF-8, cut on a character boundary.
func TestReason(t *testing.T) {
	e := strings.Repeat("é", 200) // 400 bytes
	for _, tc := range []struct{ in, want string }{
		{"x509: certificate is valid for x\x1b[2J\x1b[31mOWNED\x1b[0m\rfake line, not localhost",
			"x509: certificate is valid for x [2J [31mOWNED [0m fake line, not localhost"},
		{"a\x00b\tc\u202ed", "a b c d"},
		{"bad \xc3 byte", "bad \uFFFD byte"},
		{`malformed HTTP response "` + e + `"`, `malformed HTTP response "` + strings.Repeat("é", 137) + "…"}, // 25 + 274 bytes
		{"short", "short"},
	} {
		got := Reason(tc.in, 300)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Reason(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
