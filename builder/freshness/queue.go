package freshness

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Batch is what one build answers.
type Batch struct {
	// Full is set when everything must be rendered: a schedule, a new day, a (re)connect.
	Full bool
	// Triggers are what asked for the build, each once, in the order they first asked
	// (snapshot.Trigger* values).
	Triggers []string
	// Changes are the change notifications received since the previous batch.
	Changes Changes
	// LSN is the primary's WAL position that every change of the batch lies before; the
	// build waits for the replica to replay it. 0: nothing to wait for.
	LSN LSN
	// Noticed is when the batch's first change notification arrived; zero without one.
	Noticed time.Time
}

// Queue gathers what builder serve is asked to build into one batch at a time, so that one
// build runs at a time and everything asked for during a build is answered by the next one.
// A full build is due at once. Changes are debounced: a batch of changes is due when none
// has arrived for Quiet, or MaxDelay after its first one, whichever comes first, so a burst
// makes one build and a steady stream one build per MaxDelay.
//
// Queue is the batch being gathered. Its zero value debounces nothing; set Quiet and
// MaxDelay before use.
type Queue struct {
	Quiet, MaxDelay time.Duration

	mu   sync.Mutex
	cur  Batch
	last time.Time // when the latest change arrived
	// again makes the batch due at once: it holds a batch put back (Again), whose changes
	// were debounced already.
	again bool
	wake  chan struct{}
}

// Full asks for a full build as soon as the current one (if any) is done. lsn is the
// primary's position the build must see, or 0.
func (q *Queue) Full(trigger string, lsn LSN) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cur.Full = true
	q.note(trigger, lsn)
	q.signal()
}

// Change adds one change notification's payload, received at with the primary at lsn. A
// payload that cannot be read makes the batch a full build; its error is returned to log.
func (q *Queue) Change(trigger, payload string, lsn LSN, at time.Time) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.cur.Changes.Add(payload)
	if q.cur.Noticed.IsZero() {
		q.cur.Noticed = at
	}
	q.last = at
	q.note(trigger, lsn)
	q.signal()
	return err
}

// Again puts b, which Next returned, back into the batch being gathered, asked for by
// trigger as well as by b's triggers: builder serve does so when b's build read the replica
// before it had replayed b.LSN. Every id of b joins what arrived since, the build waits for
// b.LSN again, and b's changes, debounced already, make the batch due at once.
func (q *Queue) Again(b Batch, trigger string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cur.Full = q.cur.Full || b.Full
	q.cur.Changes.Merge(&b.Changes)
	q.note(trigger, b.LSN)
	for _, t := range b.Triggers {
		q.note(t, b.LSN)
	}
	if !b.Noticed.IsZero() && (q.cur.Noticed.IsZero() || b.Noticed.Before(q.cur.Noticed)) {
		q.cur.Noticed = b.Noticed
	}
	q.again = true
	q.signal()
}

// Next waits until a batch is due and returns it, or returns false when ctx is done.
func (q *Queue) Next(ctx context.Context) (Batch, bool) {
	for {
		q.mu.Lock()
		wait, due := q.due(time.Now())
		if due {
			b := q.cur
			q.cur, q.last, q.again = Batch{}, time.Time{}, false
			q.mu.Unlock()
			return b, true
		}
		wake := q.wakeChan()
		q.mu.Unlock()
		if !sleep(ctx, wake, wait) {
			return Batch{}, false
		}
	}
}

// sleep waits for wake, for wait when it is not 0, or for ctx; false means ctx is done.
func sleep(ctx context.Context, wake <-chan struct{}, wait time.Duration) bool {
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-timer:
	}
	return true
}

// due says whether the batch is due at now, or how long until it is (0: nothing pending).
func (q *Queue) due(now time.Time) (time.Duration, bool) {
	switch {
	case q.cur.Full || q.again:
		return 0, true
	case q.cur.Changes.Empty():
		return 0, false
	}
	at := q.last.Add(q.Quiet)
	if limit := q.cur.Noticed.Add(q.MaxDelay); limit.Before(at) {
		at = limit
	}
	if !now.Before(at) {
		return 0, true
	}
	return at.Sub(now), false
}

func (q *Queue) note(trigger string, lsn LSN) {
	if !slices.Contains(q.cur.Triggers, trigger) {
		q.cur.Triggers = append(q.cur.Triggers, trigger)
	}
	q.cur.LSN = max(q.cur.LSN, lsn)
}

func (q *Queue) wakeChan() chan struct{} {
	if q.wake == nil {
		q.wake = make(chan struct{}, 1)
	}
	return q.wake
}

// signal wakes a waiting Next.
func (q *Queue) signal() {
	select {
	case q.wakeChan() <- struct{}{}:
	default:
	}
}
