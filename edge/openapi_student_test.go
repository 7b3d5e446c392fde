package edge_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge"
	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// openAPIStudentSeed adds students to openAPISeed's registrations: student 7 is registered in
// class 10 and had a test on 2026-11-02 in class 11 of the same course (D32).
const openAPIStudentSeed = `
INSERT INTO registrations (id, class_id, student_id, test_date) VALUES
  (4711, 10, 7, NULL),
  (4712, 11, 7, '2026-11-02');
`

// TestOpenAPIStudent validates a signed-in student's reads against the document (D30-D33):
// the class read with the per-student fields filled (an integer and a date) and without
// them, another endpoint with a JWT, and the 401 of a JWT signed with another key.
func TestOpenAPIStudent(t *testing.T) {
	ctx := context.Background()
	secret := []byte("0123456789abcdef0123456789abcdef")
	dbURL := testkit.NewMigratedDatabase(t)
	testkit.Exec(t, dbURL, openAPISeed+openAPIStudentSeed)
	cfg := config.Default()
	cfg.Database.URL = dbURL
	cfg.Store = testkit.NewLocalStore(t)
	cfg.Edge.PollInterval, cfg.Edge.TokenRefresh = time.Hour, time.Hour
	cfg.Edge.JWT.HMACSecret = string(secret)
	now := func() time.Time { return openAPINow }
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := builder.Run(ctx, cfg, builder.RunOptions{Now: now, Logger: quiet}); err != nil {
		t.Fatalf("build the snapshot: %v", err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	verifier, err := auth.NewJWTVerifier(ctx, auth.JWTOptions{HMACSecret: secret, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := edge.New(edge.Options{Config: cfg, Store: openTestStore(t, cfg.Store), Replica: pool,
		Templates: templates.MustDefault(), Logger: quiet, Now: now, JWT: verifier})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	s.Start(runCtx)
	env := &apiEnv{servers: map[string]http.Handler{srvOK: s.Handler()}}
	doc, router := loadServedDocument(t, s.Handler())

	jwtOf := func(student any, key []byte) string {
		return "Bearer " + jwttest.HS256(t, key, jwttest.Claims{"sub": student, "exp": openAPINow.Add(time.Hour).Unix()})
	}
	for _, tc := range []struct {
		call apiCall
		want map[string]any // members of the body that must have these values
	}{
		{apiCall{target: "/api/v2/public/class/10", auth: jwtOf("7", secret), status: 200},
			map[string]any{"registration_id": float64(4711), "prev_reg_test_date": "2026-11-02"}},
		{apiCall{target: "/api/v2/public/class/11", auth: jwtOf(7, secret), status: 200},
			map[string]any{"registration_id": float64(4712), "prev_reg_test_date": nil}},
		{apiCall{target: "/api/v2/public/class/21", auth: jwtOf("8", secret), status: 200},
			map[string]any{"registration_id": nil, "prev_reg_test_date": nil}},
		{apiCall{target: "/api/v2/public/courses", auth: jwtOf("7", secret), status: 200}, nil},
		{apiCall{target: "/api/v2/public/class/10", auth: jwtOf("7", []byte("another secret of thirty-two bytes!")), status: 401},
			map[string]any{"message": "Unauthenticated."}},
	} {
		name := tc.call.methodOr() + " " + tc.call.target
		rec := env.send(t, tc.call)
		if rec.Code != tc.call.status {
			t.Errorf("%s: status %d, want %d; body %s", name, rec.Code, tc.call.status, rec.Body)
			continue
		}
		if _, err := validate(doc, router, tc.call, rec); err != nil {
			t.Errorf("%s: the response does not match the document: %v", name, err)
		}
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil && tc.want != nil {
			t.Errorf("%s: body %s: %v", name, rec.Body, err)
		}
		for k, v := range tc.want {
			if got, ok := body[k]; !ok || got != v {
				t.Errorf("%s: %s = %v (present %v), want %v", name, k, got, ok, v)
			}
		}
	}
}
