package edge

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/edge/ratelimit"
	"github.com/trainingco/catalogue/edge/ratelimit/redistest"
)

// limited is the response to a request for course 1 of a token with limit and remaining
// requests left.
func limited(status int, limit, remaining string) response {
	r := response{Status: status, Body: authCourse, Headers: map[string]string{
		"Content-Type": jsonContentType, "X-RateLimit-Limit": limit, "X-RateLimit-Remaining": remaining}}
	if status == 429 {
		r.Body = bodyTooMany
		r.Headers["Retry-After"] = "60"
		r.Headers["X-RateLimit-Reset"] = strconv.FormatInt(authT0Unix+60, 10)
	}
	return r
}

// TestTokenOwnLimit: a token with a limit of its own (api_tokens.rate_limit) is limited at
// it rather than edge.rate_limit, and a change of it applies at the next refresh of the
// tokens, counting the requests already in the window.
func TestTokenOwnLimit(t *testing.T) {
	env := newAuthEnv(t, nil)
	ctx := context.Background()
	id, token, err := apitoken.CreateWithLimit(ctx, env.conn, "partner", 2)
	if err != nil {
		t.Fatal(err)
	}
	env.refreshTokens(t)
	steps := []struct {
		limit int // the token's own limit set before the step; -1: unchanged
		want  response
	}{
		{-1, limited(200, "2", "1")},
		{-1, limited(200, "2", "0")},
		{-1, limited(429, "2", "0")},
		{5, limited(200, "5", "2")},   // raised: 2 in the window, this the third
		{0, limited(200, "60", "56")}, // back to edge.rate_limit
	}
	for i, s := range steps {
		if s.limit >= 0 {
			if err := apitoken.SetLimit(ctx, env.conn, id, s.limit); err != nil {
				t.Fatal(err)
			}
			env.refreshTokens(t)
		}
		got := env.send(req{target: course1, auth: []string{"Bearer " + token}})
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d mismatch (-want +got):\n%s", i, diff)
		}
	}
	// The other token is still at edge.rate_limit.
	if diff := cmp.Diff(ok("59"), env.send(req{target: course1, auth: env.bearer()})); diff != "" {
		t.Errorf("the default token mismatch (-want +got):\n%s", diff)
	}
}

// TestSharedLimiterInMetrics: an edge whose limits are kept in Redis counts there, and
// /metrics says whether it is sharing and how often Redis failed.
func TestSharedLimiterInMetrics(t *testing.T) {
	prefix := redistest.Prefix()
	// A timeout that a busy test machine cannot reach: a late answer would count as a failure.
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: redistest.URL(t), Prefix: prefix, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	shared := ratelimit.NewShared(context.Background(), ratelimit.SharedOptions{Redis: r,
		Local: ratelimit.NewMemory(time.Minute, nil), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = shared.Close() })
	env := newAuthEnvWith(t, nil, func(o *Options) { o.Limiter = shared; o.Now = nil })
	for _, want := range []string{"59", "58"} {
		if got := env.send(req{target: course1, auth: env.bearer()}); got.Headers["X-RateLimit-Remaining"] != want {
			t.Errorf("X-RateLimit-Remaining = %q, want %q", got.Headers["X-RateLimit-Remaining"], want)
		}
	}
	// Redis holds the count: a limiter of its own on the same Redis sees both requests.
	other, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: redistest.URL(t), Prefix: prefix, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	key := hex.EncodeToString(apitoken.Hash(env.token))
	if d, err := other.Peek(context.Background(), key, 60); err != nil || d.Remaining != 58 {
		t.Errorf("Peek through another client = %+v, %v; want 58 remaining", d, err)
	}
	rec := httptest.NewRecorder()
	env.s.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range []string{"catalogue_edge_ratelimit_shared 1", "catalogue_edge_ratelimit_redis_failures_total 0",
		"catalogue_edge_ratelimit_redis_outages_total 0"} {
		if !strings.Contains(rec.Body.String(), "\n"+line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}
