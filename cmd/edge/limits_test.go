package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestRunBoundsRequestHeaders: request headers past 32 KiB are refused with 431 (D46) as
// JSON with the headers of every error (D24, D45, D25); past twice that, net/http refuses
// them itself before reading more (its default would read a megabyte); ordinary ones are
// served.
func TestRunBoundsRequestHeaders(t *testing.T) {
	addr, token, _ := startedPublished(t, "")
	const tooLarge = `{"message":"Request Header Fields Too Large."}` + "\n"
	for _, tt := range []struct {
		size int
		want int
		body string // "": not checked (net/http's own answer)
	}{
		{8 << 10, http.StatusOK, ""},
		{31 << 10, http.StatusOK, ""}, // with the request's other headers, under 32 KiB
		{33 << 10, http.StatusRequestHeaderFieldsTooLarge, tooLarge},
		{48 << 10, http.StatusRequestHeaderFieldsTooLarge, tooLarge},
		{1 << 20, http.StatusRequestHeaderFieldsTooLarge, ""},
	} {
		req, err := http.NewRequest("GET", "http://"+addr+"/api/v2/public/course/1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Padding", strings.Repeat("p", tt.size))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET with a header of %d bytes: %v", tt.size, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("GET with a header of %d bytes: status %d, want %d", tt.size, res.StatusCode, tt.want)
		}
		if tt.body == "" {
			continue
		}
		if string(body) != tt.body || res.Header.Get("Content-Type") != "application/json" ||
			res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET with a header of %d bytes: %q %v, want %q as JSON, no-store, nosniff", tt.size, body, res.Header, tt.body)
		}
	}
}

// TestReplicaStatementTimeout: the search pool's sessions carry statement_timeout, so that
// PostgreSQL itself ends a search the edge gave up on even when the edge's cancel request
// never reaches it.
func TestReplicaStatementTimeout(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = testkit.NewDatabase(t)
	cfg.Edge.SearchTimeout = 1500 * time.Millisecond
	ctx := context.Background()
	pool, err := openReplica(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var got string
	if err := pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "2500ms" {
		t.Errorf("statement_timeout of a search connection = %q, want 2500ms (edge.search_timeout and a second)", got)
	}
	tokens, err := openTokens(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tokens.Close()
	if err := tokens.QueryRow(ctx, "SHOW statement_timeout").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "6s" || tokens.Config().MaxConns != 1 {
		t.Errorf("token pool: statement_timeout %q, %d connections; want 6s and 1, its own", got, tokens.Config().MaxConns)
	}
}
