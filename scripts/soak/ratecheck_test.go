package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckLimit(t *testing.T) {
	// A limit of 2 in a window of 100 ns. ok(s, r, rem) is an accepted request sent at s and
	// answered at r; no(s, r) a refused one.
	ok := func(s, r int64, rem int) exchange { return exchange{send: s, recv: r, out: accepted, remaining: rem} }
	no := func(s, r int64) exchange { return exchange{send: s, recv: r, out: refused} }
	lost := func(s, r int64) exchange { return exchange{send: s, recv: r, out: unknown} }
	tests := []struct {
		name string
		ex   []exchange
		want []string
	}{
		{
			name: "within the limit, then refused, then accepted once the first left the window",
			ex:   []exchange{ok(0, 1, 1), ok(10, 11, 0), no(20, 21), ok(101, 102, 0)},
		},
		{
			name: "a third accepted request well inside the window",
			ex:   []exchange{ok(0, 1, 1), ok(10, 11, 0), ok(20, 21, 0)},
			want: []string{"request 2 accepted with at least 2 accepted in the window"},
		},
		{
			name: "a third accepted request whose timing allows the first to have left",
			// recv of the third - send of the first = 100: the first may have expired.
			ex: []exchange{ok(0, 5, 1), ok(10, 11, 0), ok(60, 100, 0)},
		},
		{
			name: "refused with one request in the window",
			ex:   []exchange{ok(0, 1, 1), no(10, 11)},
			want: []string{"request 1 refused with at most 1 accepted in the window"},
		},
		{
			name: "refused after the first surely left the window",
			ex:   []exchange{ok(0, 1, 1), ok(10, 11, 0), no(101, 102)},
			want: []string{"request 2 refused with at most 1 accepted in the window"},
		},
		{
			name: "refused when the first may still have been in the window",
			ex:   []exchange{ok(0, 2, 1), ok(10, 11, 0), no(101, 102)},
		},
		{
			name: "a lost request may have been counted, so a refusal after it is no violation",
			ex:   []exchange{ok(0, 1, 1), lost(10, 11), no(20, 21)},
		},
		{
			name: "a lost request is not surely counted, so an acceptance after it is no violation",
			ex:   []exchange{ok(0, 1, 1), lost(10, 11), ok(20, 21, 0)},
		},
		{
			name: "remaining must count this request",
			ex:   []exchange{ok(0, 1, 2)},
			want: []string{"request 0: X-RateLimit-Remaining 2, want 1 to 1"},
		},
		{
			name: "remaining must count the earlier request in the window",
			ex:   []exchange{ok(0, 1, 1), ok(10, 11, 1)},
			want: []string{"request 1: X-RateLimit-Remaining 1, want 0 to 0"},
		},
		{
			name: "remaining may count an earlier request that may have left the window",
			ex:   []exchange{ok(0, 5, 1), ok(99, 103, 1), ok(150, 151, 0)},
		},
		{
			name: "no remaining header is not checked",
			ex:   []exchange{ok(0, 1, -1), ok(10, 11, -1)},
		},
	}
	for _, tt := range tests {
		got := checkLimit(tt.ex, 2, 100*time.Nanosecond)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("checkLimit(%q) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
