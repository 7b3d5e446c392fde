package search

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// BenchmarkSearchEncode measures the encoding of a full page of 50 classes, the part of a
// search that is the edge's own work rather than PostgreSQL's.
func BenchmarkSearchEncode(b *testing.B) {
	r := row{id: 123456, courseID: 789, course: "Welding Basics & <More>", typ: "Brick and Mortar",
		start: time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC), end: time.Date(2027, 4, 3, 0, 0, 0, 0, time.UTC),
		city: pgtype.Text{String: "Springfield", Valid: true}, state: pgtype.Text{String: "IL", Valid: true},
		cost: 500, seats: pgtype.Int8{Int64: 7, Valid: true}}
	var body []byte
	b.ReportAllocs()
	for b.Loop() {
		pg := page{Data: make([]item, 0, 50), Total: 1000, LastPage: 20}
		for range 50 {
			pg.Data = append(pg.Data, r.item())
		}
		var err error
		if body, err = json.Marshal(pg); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(body)))
}
