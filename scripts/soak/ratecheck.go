package main

import (
	"fmt"
	"time"
)

// outcome is what the edge's limiter decided for one request, as the client saw it.
type outcome int8

const (
	refused  outcome = iota // 429: not counted against the allowance (D23)
	accepted                // counted: any other answer to a good token, a 401 to a bad one
	unknown                 // no answer (a connection error): it may have been counted
)

// exchange is one request of one rate-limit key, timed on the wall clock the edge's limiter
// reads too (both processes run on this machine): the limiter decided at some instant
// between send and recv.
type exchange struct {
	send, recv int64 // Unix nanoseconds
	out        outcome
	remaining  int // X-RateLimit-Remaining of an accepted request; -1 when not sent
}

// checkLimit returns the definite violations of the limit in the exchanges of one key: at
// most limit accepted requests in any rolling window, a refusal only when limit requests
// were accepted in the window, and X-RateLimit-Remaining the allowance left after the
// request (D23). The exchanges must be sequential (each sent after the one before was
// answered), as the load generator sends a key's requests, so that the client's order is
// the limiter's.
//
// The limiter's instant for request j is only known to lie in [send_j, recv_j], so the
// number n of earlier accepted requests still in its window is bounded, not known:
// request k is surely in it when recv_j - send_k < window and surely out of it when
// recv_k <= send_j - window. Only a decision that no n between the bounds explains is
// reported, so the check never fails a correct limiter, however slow the answers.
func checkLimit(ex []exchange, limit int, window time.Duration) []string {
	w := int64(window)
	var maybe, sure []exchange // earlier requests possibly, and surely, accepted
	mi, si := 0, 0             // the first of maybe and sure that may still be in the window
	var problems []string
	for j, e := range ex {
		for mi < len(maybe) && maybe[mi].recv <= e.send-w {
			mi++
		}
		for si < len(sure) && sure[si].send <= e.recv-w {
			si++
		}
		possible, definite := len(maybe)-mi, len(sure)-si
		switch {
		case e.out == refused && possible < limit:
			problems = append(problems, fmt.Sprintf("request %d refused with at most %d accepted in the window", j, possible))
		case e.out == accepted && definite >= limit:
			problems = append(problems, fmt.Sprintf("request %d accepted with at least %d accepted in the window", j, definite))
		case e.out == accepted && e.remaining >= 0 && (e.remaining < limit-1-possible || e.remaining > limit-1-definite):
			problems = append(problems, fmt.Sprintf("request %d: X-RateLimit-Remaining %d, want %d to %d",
				j, e.remaining, max(0, limit-1-possible), limit-1-definite))
		}
		if e.out != refused {
			maybe = append(maybe, e)
		}
		if e.out == accepted {
			sure = append(sure, e)
		}
	}
	return problems
}
