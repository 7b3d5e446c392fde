package edge

import (
	"context"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/apitoken"
)

// TestTokenRefreshOnItsOwnConnection: token hashes are reloaded through a pool of their own
// (Options.Tokens), so searches holding every connection of the search pool, as on a slow
// replica under load, cannot hold back a revocation (D22); and the age of the token set in
// force is exported.
func TestTokenRefreshOnItsOwnConnection(t *testing.T) {
	ctx := context.Background()
	env := newAuthEnvWith(t, nil, func(o *Options) {
		p, err := pgxpool.New(ctx, o.Replica.Config().ConnString())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		o.Tokens = p
	})
	for range env.replica.Config().MaxConns { // every search connection busy
		c, err := env.replica.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
	}
	if err := apitoken.Revoke(ctx, env.conn, env.tokenID); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := env.s.auth.Refresh(rctx); err != nil {
		t.Fatalf("refresh with the search pool exhausted: %v", err)
	}
	if got := env.send(req{target: course1, auth: env.bearer()}); got.Status != 401 {
		t.Errorf("revoked token after the refresh: status %d, want 401", got.Status)
	}
	env.clock.at(7 * time.Second)
	want := map[string]float64{`catalogue_edge_token_set_age_seconds{}`: 7}
	if diff := gocmp.Diff(want, flatten(scrape(t, env), "catalogue_edge_token_set")); diff != "" {
		t.Errorf("token set age 7 s after its load mismatch (-want +got):\n%s", diff)
	}
}
