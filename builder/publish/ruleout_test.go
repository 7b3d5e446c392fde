package publish

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// TestRuleOutIn: what ruleOutIn leaves of the candidates is what no entry of the manifest
// names, whichever way it compares (a few candidates or many), wherever the hash is (at
// another route than the one it was a candidate for, at several routes) and whatever its
// length. The expected set is computed the plain way, entry by entry.
func TestRuleOutIn(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 27))
	hash := func() string { return fmt.Sprintf("%064x", rng.Uint64N(40)) } // collisions on purpose
	for i := range 300 {
		m := &snapshot.Manifest{Documents: map[string]snapshot.Entry{}}
		for j := range rng.IntN(60) {
			h := hash()
			switch rng.IntN(20) {
			case 0:
				h = ""
			case 1:
				h = h[:1]
			}
			m.Documents[snapshot.ClassRoute(int64(j))] = snapshot.Entry{Hash: h}
		}
		cands := map[string]bool{}
		for range rng.IntN(2 * fewCandidates) {
			h := hash()
			if rng.IntN(20) == 0 {
				h = ""
			}
			cands[h] = true
		}
		want := maps.Clone(cands)
		for _, e := range m.Documents {
			delete(want, e.Hash)
		}
		ruleOutIn(cands, m)
		if diff := cmp.Diff(want, cands); diff != "" {
			t.Fatalf("case %d (%d candidates): (-want +got)\n%s", i, len(want), diff)
		}
	}
}

// BenchmarkRuleOutIn rules one candidate out of builder.keep's default 10 manifests of
// 100,000 entries each, as collection does after a change build.
func BenchmarkRuleOutIn(b *testing.B) {
	m := &snapshot.Manifest{Documents: map[string]snapshot.Entry{}}
	for i := range 100_000 {
		m.Documents[snapshot.ClassRoute(int64(i))] = snapshot.Entry{Hash: fmt.Sprintf("%064x", rand.Uint64())}
	}
	for b.Loop() {
		cands := map[string]bool{fmt.Sprintf("%064x", rand.Uint64()): true}
		for range 10 {
			ruleOutIn(cands, m)
		}
	}
}
