package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// BenchmarkSearchEncode measures the encoding of a full page of 50 classes, the part of a
// search that is the edge's own work rather than PostgreSQL's.
func BenchmarkSearchEncode(b *testing.B) {
	row := searchRow{id: 123456, courseID: 789, course: "Welding Basics & <More>", typ: "Brick and Mortar",
		start: time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC), end: time.Date(2027, 4, 3, 0, 0, 0, 0, time.UTC),
		city: pgtype.Text{String: "Springfield", Valid: true}, state: pgtype.Text{String: "IL", Valid: true},
		cost: 500, seats: pgtype.Int8{Int64: 7, Valid: true}}
	buf := make([]byte, 0, 16<<10)
	b.ReportAllocs()
	for b.Loop() {
		buf = append(buf[:0], `{"data":[`...)
		for i := range 50 {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = row.appendJSON(buf)
		}
		buf = append(buf, `],"total":1000,"last_page":20}`...)
	}
	b.SetBytes(int64(len(buf)))
}

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
