package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkSearchHandler measures a whole search request through the server's handler,
// token check and rate limit included, against the small seeded catalogue.
func BenchmarkSearchHandler(b *testing.B) {
	env := newSearchEnv(b, searchSeed, searchOpts{})
	req := httptest.NewRequest(http.MethodGet, "/api/v2/public/classes?limit=50", nil)
	req.Header.Set("Authorization", "Bearer "+env.token)
	h := env.s.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
