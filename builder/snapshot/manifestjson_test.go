package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestEncodeManifestIsEncodingJSON: encodeManifest writes what json.Marshal writes, byte for
// byte, for manifests with and without a build, a feed and documents, and with routes that
// need escaping (quotes, backslashes, control characters, HTML's <, > and &, non-ASCII and
// invalid UTF-8), which it leaves to encoding/json. TestFormatIsByteForByte pins the bytes
// themselves.
func TestEncodeManifestIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 2026))
	odd := []string{`"`, `\`, "\n", "\x01", "<", ">", "&", "é", "\u2028", "\xff", "\x7f", " "}
	route := func() string {
		r := fmt.Sprintf("/public/class/%d", rng.IntN(1e6))
		if rng.IntN(8) == 0 {
			r += odd[rng.IntN(len(odd))] + "x"
		}
		return r
	}
	for i := range 200 {
		m := &Manifest{ID: fmt.Sprintf("s%d", i), Header: Header{
			BuiltAt: time.Unix(rng.Int64N(2e9), rng.Int64N(1e9)).UTC(), Today: "2027-03-01", Timezone: "Europe/Paris",
			Counts: Counts{Courses: rng.IntN(9), Classes: rng.IntN(9), Documents: rng.IntN(99)},
		}}
		if rng.IntN(2) == 0 {
			m.Build = &Build{Trigger: TriggerChange, Incremental: true, Routes: []string{route()}}
		}
		if rng.IntN(2) == 0 {
			m.Feed = &Feed{Last: rng.Int64N(1 << 53), Tombstones: []Tombstone{{Route: route(), Modified: 3, At: m.BuiltAt}}}
		}
		if n := rng.IntN(40) - 5; n >= 0 { // nil documents one time in eight
			m.Documents = make(map[string]Entry, n)
			for range n {
				e := Entry{Hash: fmt.Sprintf("%064x", rng.Uint64()), Size: rng.Int64N(1 << 40)}
				if rng.IntN(2) == 0 {
					e.Modified = rng.Int64N(1<<53) + 1
				}
				m.Documents[route()] = e
			}
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("manifest %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// BenchmarkEncodeManifest encodes a manifest of the benchmark's size (83,317 documents at
// 100,000 classes), which every build writes whole; with -bench=Manifest it runs beside
// encoding/json's.
func BenchmarkEncodeManifest(b *testing.B) {
	m := benchManifest(83_317)
	for b.Loop() {
		if _, err := encodeManifest(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodingJSONManifest(b *testing.B) {
	m := benchManifest(83_317)
	for b.Loop() {
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

func benchManifest(n int) *Manifest {
	m := &Manifest{ID: "s1", Header: Header{BuiltAt: time.Now().UTC(), Counts: Counts{Documents: n}},
		Documents: make(map[string]Entry, n), Feed: &Feed{Last: int64(n)}}
	for i := range n {
		m.Documents[fmt.Sprintf("/public/class/%d", i+1)] = Entry{Hash: fmt.Sprintf("%064x", i), Size: 900, Modified: int64(i + 1)}
	}
	return m
}
