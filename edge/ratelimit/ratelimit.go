// Package ratelimit decides whether a request may proceed under a sliding-window limit
// (decision D23): at most limit accepted requests for one key in any rolling window, each
// key with the limit its caller gives (a token's own, edge.rate_limit, a student's). A
// rejected request does not consume the allowance.
//
// Limiter is the small interface the edge depends on. Memory implements it for a single
// edge; Redis for several edges behind one load balancer, which then count every request
// together; Shared is Redis with Memory standing in while Redis cannot answer.
package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Limiter decides, per key, whether one more request is accepted. Keys are opaque: the
// caller makes them distinct across what it limits (tokens, addresses, students).
type Limiter interface {
	// Allow counts a request for key when fewer than limit were accepted in the window
	// that ends now, and reports the decision. A rejected request is not counted. An
	// error means the limiter could not decide (a shared backend is down, or limit is not
	// positive); the caller chooses whether to fail open.
	Allow(ctx context.Context, key string, limit int) (Decision, error)
	// Peek reports what Allow would decide now without counting anything.
	Peek(ctx context.Context, key string, limit int) (Decision, error)
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
	// rejection, when a request would be accepted again. Zero when the window is empty, and
	// from Redis for an accepted request (the edge tells it only with a 429, and looking it
	// up would cost Redis another command per request).
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

// errLimit refuses a limit that is not positive: the limits come from validated
// configuration and a checked column, so one would be a bug of the caller.
func errLimit(key string, limit int) error {
	return fmt.Errorf("ratelimit: limit of %q must be positive (got %d)", key, limit)
}
