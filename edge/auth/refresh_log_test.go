package auth_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/templates"
)

// TestFirstRefreshFailureSaysNoTokenSet: an edge that has never loaded the token hashes
// says that none is in force, and what that means for requests; it logged that "the last
// token set stays in force" (with loaded=false) when there was none (an operator's review).
func TestFirstRefreshFailureSaysNoTokenSet(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	tpl, err := templates.Load("")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	g := auth.New(auth.Options{Pool: pool, Templates: tpl, RateLimit: 60, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err := g.Refresh(context.Background()); err == nil {
		t.Fatal("Refresh from a database that is not there: no error")
	}
	got := log.String()
	if !strings.Contains(got, "no API token set is loaded yet: requests with an API token get 503 until one loads") || strings.Contains(got, "stays in force") {
		t.Errorf("first failed refresh logged %q; want it to say no token set is loaded, and what that means", got)
	}
}
