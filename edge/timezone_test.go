package edge

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

// TestNewResolvesTheTimezone: the zone that defines "today" (D1) is resolved once, when the
// server is made; one that cannot be resolved is refused then, instead of every search
// silently taking "today" in UTC.
func TestNewResolvesTheTimezone(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://127.0.0.1:9/none") // never connects here
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cfg := config.Default()
	cfg.Timezone = "Mars/Olympus_Mons"
	_, err = New(Options{Config: cfg, Store: store.NewLocal(t.TempDir()), Replica: pool, Templates: templates.MustDefault()})
	if err == nil || !strings.Contains(err.Error(), "timezone") {
		t.Errorf("New with timezone %q = %v, want an error naming timezone", cfg.Timezone, err)
	}
}
