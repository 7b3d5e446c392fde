package search

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendPage checks appendPage against encoding/json on random pages: nulls and values,
// strings that need escaping, empty pages.
func TestAppendPage(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 3))
	texts := []string{"", "Welding Basics", `100% Cotton_Weaving\Basics`, "<b>&amp;</b>", `"quoted"`,
		"tab\there\nline", "\x00\x1f\x7f", "Résumé Café ServSafe®", "\u2028\u2029", "\xff\xfe bad", "Ωmega 😀"}
	text := func() *string {
		if r.IntN(4) == 0 {
			return nil
		}
		s := texts[r.IntN(len(texts))]
		return &s
	}
	for range 500 {
		pg := page{Data: []item{}, Total: r.Int64N(1 << 40), LastPage: r.Int64N(1000)}
		for range r.IntN(6) {
			it := item{ID: r.Int64() - r.Int64(), CourseID: r.Int64N(1 << 50), Course: *orEmpty(text()), Type: *orEmpty(text()),
				Start: day(time.Date(1+r.IntN(9999), 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(365))),
				End:   day(time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)), City: text(), State: text(), Schedule: text(),
				Cost: r.Int64N(100000) - 50, Full: r.IntN(2) == 0}
			if r.IntN(2) == 0 {
				n := r.Int64N(100)
				it.Seats = &n
			}
			pg.Data = append(pg.Data, it)
		}
		want, err := json.Marshal(pg)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendPage([]byte("x"), &pg); string(got) != "x"+string(want) {
			t.Fatalf("appendPage(%+v) =\n%s\nwant as encoding/json writes it\n%s", pg, got[1:], want)
		}
	}
}

func orEmpty(s *string) *string {
	if s == nil {
		return new(string)
	}
	return s
}
