// Package ratelimit decides whether a request may proceed under a sliding-window limit
// (decision D23): at most Limit accepted requests for one key in any rolling window. A
// rejected request does not consume the allowance.
//
// Limiter is the small interface the edge depends on. Memory implements it for a single
// edge; a shared implementation (Redis) for several edges behind one load balancer can
// implement the same interface later.
package ratelimit

import (
	"context"
	"time"
)

// Limiter decides, per key, whether one more request is accepted.
type Limiter interface {
	// Allow counts a request for key when the limit allows it and reports the decision.
	// A rejected request is not counted. An error means the limiter could not decide
	// (a shared backend is down); the caller chooses whether to fail open.
	Allow(ctx context.Context, key string) (Decision, error)
	// Peek reports what Allow would decide now without counting anything.
	Peek(ctx context.Context, key string) (Decision, error)
}

// Decision is the outcome of Allow or Peek for one key.
type Decision struct {
	// Allowed says whether the request is accepted.
	Allowed bool
	// Limit is the number of requests accepted in any window.
	Limit int
	// Remaining is how many more requests the window accepts after this one (Allow) or
	// from now (Peek); 0 when rejected.
	Remaining int
	// RetryAfter is, for a rejection, the time until a request would be accepted in whole
	// seconds, rounded up and at least one second; 0 when allowed.
	RetryAfter time.Duration
	// ResetAt is the instant the oldest accepted request in the window leaves it: for a
	// rejection, when a request would be accepted again. Zero when the window is empty.
	ResetAt time.Time
}

// retryAfter turns the exact wait d into the whole seconds a client is told (D23): rounded
// up, so that a client that waits that long is accepted, and at least one second.
func retryAfter(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	if s < 1 {
		s = 1
	}
	return s * time.Second
}
