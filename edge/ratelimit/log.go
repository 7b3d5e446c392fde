package ratelimit

// slidingLog holds the times (Unix nanoseconds, ascending) of one key's accepted requests
// that may still be in the window: ts[head:] is live. Dropping from the front only moves
// head; the live part is copied down once the dead prefix outweighs it, so a busy key
// reuses one backing array instead of allocating per request. Nothing is preallocated: a
// very high limit costs memory only for requests actually accepted.
type slidingLog struct {
	ts   []int64
	head int
}

// minShrink is the capacity under which a log never bothers to give memory back.
const minShrink = 64

func (l *slidingLog) len() int { return len(l.ts) - l.head }

// oldest is the earliest live time; the log must not be empty.
func (l *slidingLog) oldest() int64 { return l.ts[l.head] }

// nth is the i-th earliest live time, from 0; i must be below len.
func (l *slidingLog) nth(i int) int64 { return l.ts[l.head+i] }

// push records an accepted request at t. A clock that steps back (a wall clock adjusted)
// must not unsort the log, so t never goes below the newest time already recorded.
func (l *slidingLog) push(t int64) {
	if n := len(l.ts); n > l.head && l.ts[n-1] > t {
		t = l.ts[n-1]
	}
	l.ts = append(l.ts, t)
}

// expire drops every time at or before cutoff: a request accepted at t counts while
// now - t < window, that is while t > now - window.
func (l *slidingLog) expire(cutoff int64) {
	for l.head < len(l.ts) && l.ts[l.head] <= cutoff {
		l.head++
	}
	live := l.len()
	switch {
	case live == 0 && cap(l.ts) > minShrink:
		l.ts, l.head = nil, 0 // a burst has passed: give its memory back
	case live == 0:
		l.ts, l.head = l.ts[:0], 0
	case cap(l.ts) > minShrink && cap(l.ts) > 4*live:
		l.ts, l.head = append(make([]int64, 0, 2*live), l.ts[l.head:]...), 0
	case l.head > live:
		l.ts, l.head = l.ts[:copy(l.ts, l.ts[l.head:])], 0
	}
}
