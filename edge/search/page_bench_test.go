package search

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// BenchmarkSearchEncode measures the encoding of a full page of 50 classes, the part of a
// search that is the edge's own work rather than PostgreSQL's.
func BenchmarkSearchEncode(b *testing.B) {
	r := row{id: pgtype.Int8{Int64: 123456, Valid: true}, courseID: pgtype.Int8{Int64: 789, Valid: true},
		course: pgtype.Text{String: "Welding Basics & <More>", Valid: true}, typ: pgtype.Text{String: "Brick and Mortar", Valid: true},
		start: pgtype.Date{Time: time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC), Valid: true},
		end:   pgtype.Date{Time: time.Date(2027, 4, 3, 0, 0, 0, 0, time.UTC), Valid: true},
		city:  pgtype.Text{String: "Springfield", Valid: true}, state: pgtype.Text{String: "IL", Valid: true},
		cost: pgtype.Int8{Int64: 500, Valid: true}, seats: pgtype.Int8{Int64: 7, Valid: true}}
	var body []byte
	b.ReportAllocs()
	for b.Loop() {
		pg := page{Data: make([]item, 0, 50), Total: 1000, LastPage: 20}
		for range 50 {
			it, err := r.item()
			if err != nil {
				b.Fatal(err)
			}
			pg.Data = append(pg.Data, it)
		}
		body = encode(&pg)
	}
	b.SetBytes(int64(len(body)))
}
