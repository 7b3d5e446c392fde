package freshness

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The tests run in synctest bubbles: time.Now, Next's timers and the tests' sleeps follow a
// fake clock that moves only when every goroutine of the test waits, so a batch is due at
// the exact instant the debounce says, however busy the machine is.
const (
	quiet    = 60 * time.Millisecond
	maxDelay = 300 * time.Millisecond
)

func change(id int) string {
	return `{"table": "classes", "ids": [` + strconv.Itoa(id) + `], "course_ids": [1]}`
}

func next(t *testing.T, q *Queue) Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, ok := q.Next(ctx)
	if !ok {
		t.Fatal("Next: no batch within 10 s")
	}
	return b
}

func TestFullIsDueAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{Quiet: time.Hour, MaxDelay: time.Hour}
		_ = q.Change("change", change(1), 5, time.Now())
		q.Full("schedule", 0)
		q.Full("listen", 9)
		began := time.Now()
		b := next(t, q)
		if waited := time.Since(began); waited != 0 {
			t.Errorf("a full build came after %v, want at once", waited)
		}
		if !b.Full || b.LSN != 9 || !cmp.Equal(b.Triggers, []string{"change", "schedule", "listen"}) || !cmp.Equal(b.Changes.Classes(), []int64{1}) {
			t.Errorf("batch = %+v, want a full one with the change, LSN 9 and three triggers in order", b)
		}
	})
}

func TestChangeWaitsForQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{Quiet: quiet, MaxDelay: maxDelay}
		began := time.Now()
		_ = q.Change("change", change(1), 7, began)
		b := next(t, q)
		if waited := time.Since(began); waited != quiet {
			t.Errorf("a single change was due after %v, want after the quiet period %v", waited, quiet)
		}
		if b.Full || b.LSN != 7 || !b.Noticed.Equal(began) {
			t.Errorf("batch = %+v, want an incremental one with LSN 7 noticed at %v", b, began)
		}
	})
}

// TestStreamIsDueAtMaxDelay sends a change every third of the quiet period: the batch never
// falls quiet and is due at MaxDelay after its first change, holding every change so far.
func TestStreamIsDueAtMaxDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{Quiet: quiet, MaxDelay: maxDelay}
		began := time.Now()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for n := 1; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = q.Change("change", change(n), 0, time.Now())
				time.Sleep(quiet / 3)
			}
		}()
		b := next(t, q)
		waited := time.Since(began)
		close(stop)
		<-done
		if waited != maxDelay {
			t.Errorf("a stream of changes was due after %v, want after MaxDelay %v", waited, maxDelay)
		}
		// The changes sent before MaxDelay, one each quiet/3 from 0; the one sent at the very
		// instant the batch is due may fall in it or in the next.
		got, sent := b.Changes.Classes(), int64(maxDelay/(quiet/3))
		if n := int64(len(got)); n < sent || n > sent+1 || !slices.IsSorted(got) || got[0] != 1 || got[n-1] != n {
			t.Errorf("the batch holds changes %v, want every change of the stream so far (1 to %d or %d)", got, sent, sent+1)
		}
		// What arrives after the batch was taken is the next batch's.
		_ = q.Change("change", change(1_000_000), 0, time.Now())
		b2 := next(t, q)
		if got2 := b2.Changes.Classes(); len(got2) == 0 || got2[0] <= got[len(got)-1] || got2[len(got2)-1] != 1_000_000 {
			t.Errorf("next batch = %v, want only changes after %v", got2, got)
		}
	})
}

func TestNextStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{Quiet: quiet, MaxDelay: maxDelay}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(quiet); cancel() }()
		if b, ok := q.Next(ctx); ok {
			t.Errorf("Next with nothing pending returned %+v, want false when ctx is done", b)
		}
	})
}

func TestUnreadableChangeMakesAFullBatch(t *testing.T) {
	q := &Queue{Quiet: quiet, MaxDelay: maxDelay}
	if err := q.Change("change", "nonsense", 0, time.Now()); err == nil {
		t.Error("Change of an unreadable payload: no error")
	}
	if b := next(t, q); !b.Changes.All() {
		t.Errorf("batch = %+v, want one that says everything changed", b)
	}
}

// TestAgainLosesNothing: a batch put back joins what arrived since, losing none of its ids,
// and is due at once, its changes debounced already.
func TestAgainLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{Quiet: quiet, MaxDelay: time.Hour}
		first := time.Now()
		_ = q.Change("change", change(1), 5, first)
		_ = q.Change("change", `{"table": "courses", "ids": [7]}`, 6, first)
		b := next(t, q)
		time.Sleep(quiet / 2)
		_ = q.Change("change", change(2), 9, time.Now())
		q.Again(b, "retry")
		began := time.Now()
		got := next(t, q)
		if waited := time.Since(began); waited != 0 {
			t.Errorf("the batch put back came after %v, want at once", waited)
		}
		want := []any{false, []string{"change", "retry"}, LSN(9), first, []int64{1, 2}, []int64{1}, []int64{7},
			map[string]int{"classes": 2, "courses": 1}}
		gotv := []any{got.Full, got.Triggers, got.LSN, got.Noticed, got.Changes.Classes(), got.Changes.ClassCourses(),
			got.Changes.Courses(), got.Changes.Notifications()}
		if d := cmp.Diff(want, gotv); d != "" {
			t.Errorf("batch (-want +got):\n%s", d)
		}
	})
}

// TestAgainKeepsFull: a full batch put back is full again.
func TestAgainKeepsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &Queue{Quiet: time.Hour, MaxDelay: time.Hour}
		q.Full("start", 3)
		b := next(t, q)
		q.Again(b, "retry")
		if got := next(t, q); !got.Full || got.LSN != 3 || !cmp.Equal(got.Triggers, []string{"retry", "start"}) {
			t.Errorf("batch = %+v, want full at LSN 3, triggered by retry and start", got)
		}
	})
}
