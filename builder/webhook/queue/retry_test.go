package queue_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/trainingco/catalogue/builder/webhook/queue"
)

// TestRetryPolicy: after its Nth error a delivery job waits 2^(N-1) seconds, at most a
// minute, however many errors it has lived through; and River discards it only after 10,000
// (about a week of errors a minute apart), not 25.
func TestRetryPolicy(t *testing.T) {
	testRetryPolicy(t, queue.RetryPolicy{})
	if queue.MaxAttempts < 10_000 {
		t.Errorf("a delivery job is discarded after %d errors, want 10,000", queue.MaxAttempts)
	}
}

func testRetryPolicy(t *testing.T, p river.ClientRetryPolicy) {
	t.Helper()
	for errors, want := range map[int]time.Duration{
		1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 32 * time.Second,
		7: time.Minute, 20: time.Minute, 400: time.Minute,
	} {
		job := &rivertype.JobRow{Errors: make([]rivertype.AttemptError, errors-1), Attempt: errors}
		got := time.Until(p.NextRetry(job))
		if got > want || got < want-time.Second {
			t.Errorf("after %d errors: retried in %v, want %v", errors, got.Round(time.Millisecond), want)
		}
	}
}
