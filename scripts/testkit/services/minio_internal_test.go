package services

import (
	"strings"
	"testing"
)

// TestRoom checks MinIO's floor as the CI machine met it: a 252 GiB disk with 2.1 GiB free
// is under 1% free, so MinIO refuses writes, and the tests are told before it starts.
func TestRoom(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		name        string
		total, free uint64
		ok          bool
	}{
		{"CI machine, 2.1 of 252 GiB free", 252 * gib, 21 * gib / 10, false},
		{"under 1% plus headroom", 100 * gib, gib + 511<<20, false},
		{"1% plus headroom", 100 * gib, gib + 512<<20, true},
		{"76 of 252 GiB free", 252 * gib, 76 * gib, true},
		{"small tmpfs, mostly free", 2 * gib, gib, true},
	} {
		if err := room("/tmp/x", c.total, c.free); (err == nil) != c.ok {
			t.Errorf("%s: room = %v, want ok %v", c.name, err, c.ok)
		}
	}
	err := room("/tmp/x", 252*gib, 21*gib/10)
	if want := "/tmp/x has 2.1 GiB free of 252.0 GiB"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("room = %v, want it to say %q", err, want)
	}
}
