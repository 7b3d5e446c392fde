package edge_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// quiet is the logger of the builder and the edges in the external tests.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// built is a catalogue the builder published for an external test.
type built struct {
	cfg   config.Config // the database and the store set; polls and token refresh hourly
	token string        // an API token in the database
	pool  *pgxpool.Pool // on the database; closed when the test ends
}

// buildCatalogue migrates a new database, runs seed in it, stores an API token named name
// and publishes one snapshot of it, built as at now, into a local store.
func buildCatalogue(t *testing.T, seed, name string, now time.Time) built {
	t.Helper()
	ctx := context.Background()
	dbURL := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, dbURL, seed)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := apitoken.Create(ctx, conn, name)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Database.URL = dbURL
	cfg.Store = testkit.NewLocalStore(t)
	cfg.Edge.PollInterval, cfg.Edge.TokenRefresh = time.Hour, time.Hour
	opts := builder.RunOptions{Now: func() time.Time { return now }, Logger: quiet}
	if _, err := builder.Run(ctx, cfg, opts); err != nil {
		t.Fatalf("build the snapshot: %v", err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return built{cfg: cfg, token: token, pool: pool}
}
