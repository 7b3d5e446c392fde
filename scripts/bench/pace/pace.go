// Package pace spreads the changes a benchmark measures one at a time over the edge's poll
// period.
//
// A driver that commits each change as soon as it saw the previous one served commits just
// after the edge's poll that loaded it, so every change falls at the same point of the poll
// period: each then measures about one period (or two, when its build outlasts the rest of
// the period), whatever the spread of real commits would give. Waiting a random time within
// the period before each commit makes the samples those of changes committed at any moment,
// as a provider's are.
package pace

import (
	"math/rand/v2"
	"time"
)

// Pacer draws the waits before the changes of one measurement.
type Pacer struct {
	r      *rand.Rand
	period time.Duration
}

// New returns a Pacer over period (the edge's edge.poll_interval; 0: no wait). The draws
// are the same in every run, so that two runs differ by the system and not by the dice.
func New(period time.Duration) *Pacer {
	return &Pacer{r: rand.New(rand.NewPCG(20, 11)), period: period}
}

// Next returns the wait before the next change: uniform in [0, period).
func (p *Pacer) Next() time.Duration {
	if p.period <= 0 {
		return 0
	}
	return time.Duration(p.r.Int64N(int64(p.period)))
}

// Wait sleeps Next.
func (p *Pacer) Wait() { time.Sleep(p.Next()) }
