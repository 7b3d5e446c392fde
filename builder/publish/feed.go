package publish

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// DefaultRetention is Publisher.Retention's default, feeds.retention's (D36).
const DefaultRetention = 7 * 24 * time.Hour

// FeedChanges is what a publication announces in the RPDE feeds: builder serve hands it to
// the webhooks (D41).
type FeedChanges struct {
	// After is the feeds' position before the publication: every change number it gave
	// out is greater, so ?afterChangeNumber=After reads exactly its changes (and any later).
	After int64
	// Courses and Classes are the ids, ascending, of the courses and classes whose single
	// read the publication changed: updated, new, or no longer served.
	Courses, Classes []int64
}

// Empty reports whether the publication changed no course or class document.
func (f FeedChanges) Empty() bool { return len(f.Courses) == 0 && len(f.Classes) == 0 }

// numbering gives out change numbers: each greater than every number given out before it,
// in this store (the high-water mark, Feed.Last) and, through the clock, in any store this
// catalogue was published to before (D39). A number is at least the wall clock in
// microseconds when it is given out; waitClock then holds the publication until the clock
// has passed the last one, so that a store rebuilt from empty, whose numbers start again
// from the clock, starts above every number ever published.
type numbering struct {
	last int64
}

func newNumbering(prev *snapshot.Feed, now time.Time) *numbering {
	n := &numbering{last: now.UnixMicro()}
	if prev != nil {
		n.last = max(n.last, prev.Last)
	}
	return n
}

func (n *numbering) next() int64 {
	n.last++
	return n.last
}

// number gives the course and class documents of m their change numbers against cur, the
// snapshot before (nil when none): a document keeps its number while its content is the
// same and gets a new one when it changes or appears; a document of cur that m does not
// have becomes a tombstone with a number of its own. Only the routes of touched can differ
// from cur when touched is not nil. Tombstones older than retention are dropped. Numbers are
// given in route order, so a build's are deterministic, from wall, the wall clock (see
// numbering).
func number(cur, m *snapshot.Manifest, touched []string, start, wall time.Time, retention time.Duration) (*snapshot.Feed, FeedChanges) {
	var prev map[string]snapshot.Entry
	var prevFeed *snapshot.Feed
	if cur != nil {
		prev, prevFeed = cur.Documents, cur.Feed
	}
	if touched == nil || prevFeed == nil { // a full build, or numbers never given: look at every route
		touched = slices.AppendSeq(slices.Collect(maps.Keys(m.Documents)), maps.Keys(prev))
	}
	slices.Sort(touched)
	touched = slices.Compact(touched)
	nb := newNumbering(prevFeed, wall)
	ch := FeedChanges{}
	if prevFeed != nil {
		ch.After = prevFeed.Last
	}
	var dead []snapshot.Tombstone
	back := map[string]bool{} // routes served again, whose old tombstones go
	for _, r := range touched {
		kind, id, ok := snapshot.FeedRoute(r)
		if !ok {
			continue
		}
		old, before := prev[r]
		e, now := m.Documents[r]
		switch {
		case now && before && old.Hash == e.Hash && old.Modified != 0:
			e.Modified = old.Modified
			m.Documents[r] = e
			continue
		case now:
			e.Modified = nb.next()
			m.Documents[r] = e
			back[r] = true
		case before:
			dead = append(dead, snapshot.Tombstone{Route: r, Modified: nb.next(), At: start.UTC()})
		default:
			continue
		}
		if kind == snapshot.KindCourse {
			ch.Courses = append(ch.Courses, id)
		} else {
			ch.Classes = append(ch.Classes, id)
		}
	}
	slices.Sort(ch.Courses)
	slices.Sort(ch.Classes)
	feed := &snapshot.Feed{Last: nb.last, Tombstones: keptTombstones(prevFeed, back, start.Add(-retention))}
	feed.Tombstones = append(feed.Tombstones, dead...)
	if len(ch.Courses)+len(ch.Classes) == 0 && prevFeed != nil {
		feed.Last = prevFeed.Last // nothing given out: the clock alone does not move the mark
	}
	return feed, ch
}

// keptTombstones are prev's tombstones still announced: not older than since, and of
// routes not served again.
func keptTombstones(prev *snapshot.Feed, back map[string]bool, since time.Time) []snapshot.Tombstone {
	kept := []snapshot.Tombstone{}
	if prev == nil {
		return kept
	}
	for _, t := range prev.Tombstones {
		if !back[t.Route] && !t.At.Before(since) {
			kept = append(kept, t)
		}
	}
	return kept
}

// checkNumbers refuses a snapshot whose greatest change number, last, is past 2^53-1, which
// a partner's JSON number cannot hold exactly (D35): before anything is stored, so that a
// refused snapshot leaves no object behind.
func checkNumbers(last int64) error {
	if last > snapshot.MaxChangeNumber {
		return fmt.Errorf("change number %d is past 2^53-1", last)
	}
	return nil
}

// waitClock waits until the wall clock in microseconds has reached last, the greatest change
// number of the snapshot about to be published (see numbering). It waits only when a build
// gave out more numbers than microseconds have passed since it started: 100,000 changes
// wait at most a tenth of a second.
func (p *Publisher) waitClock(ctx context.Context, last int64) error {
	w := p.wallClock()
	for {
		ahead := last - w.Now().UnixMicro()
		if ahead <= 0 {
			return nil
		}
		if err := w.Sleep(ctx, time.Duration(ahead)*time.Microsecond); err != nil {
			return err
		}
	}
}

// wallClock is the clock change numbers are read from and waited on: real time, whatever
// Publisher.Now says, since numbers must stay above those of every earlier store (D39).
// Tests replace it (Publisher.wall), as real time can neither be held still while a build
// gives out numbers nor be brought near 2^53-1 microseconds.
type wallClock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (p *Publisher) wallClock() wallClock {
	if p.wall != nil {
		return p.wall
	}
	return realClock{}
}

func (p *Publisher) retention() time.Duration { return cmp.Or(p.Retention, DefaultRetention) }
