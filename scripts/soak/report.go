package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// report is what the run saw and what the checks made of it.
type report struct {
	o       options
	elapsed time.Duration
	counts  map[string]map[int]int // kind -> status -> requests
	fails   *failures

	limitProblems []string // "token 3: request 70 accepted with …"
	limitCount    int
	ownLimits     int // good tokens whose limit is not -rate-limit
	overLimit     int // good tokens that met their limit (got a 429)
	hotOver       int // of them, hot ones
	tokens        int
	bad           map[outcome]int // the bad-credential requests by how the address limit treated them

	snapshots   []string // distinct snapshot ids the answers named, in build order
	regressions int      // answers naming a snapshot older than one an earlier answer of the same edge named

	rss    []rssSummary // per edge, in the order of -edge-pid
	rssErr []error
}

// analyse runs the checks that need the whole run: the rate limit per key, the order of
// snapshots per edge, the memory of each edge.
func analyse(o options, ws []*worker, elapsed time.Duration, rss []rssResult) *report {
	r := &report{o: o, elapsed: elapsed, counts: map[string]map[int]int{}, fails: ws[0].fails, bad: map[outcome]int{}}
	var seen []sighting
	for _, w := range ws {
		for kind, m := range w.counts {
			if r.counts[kind] == nil {
				r.counts[kind] = map[int]int{}
			}
			for st, n := range m {
				r.counts[kind][st] += n
			}
		}
		seen = append(seen, w.seen...)
		for _, k := range w.keys {
			r.analyseKey(k)
		}
	}
	r.regressions, r.snapshots = regressionsPerEdge(seen)
	for _, x := range rss {
		s, err := summarise(x.samples, o.warmup)
		if x.err != nil {
			err = x.err // the edge went away: that matters more than the numbers
		}
		r.rss, r.rssErr = append(r.rss, s), append(r.rssErr, err)
	}
	return r
}

// regressionsPerEdge is regressions for each edge's answers on their own, summed, and every
// snapshot id named by any of them, in build order.
func regressionsPerEdge(seen []sighting) (int, []string) {
	byEdge := map[string][]sighting{}
	for _, s := range seen {
		byEdge[s.edge] = append(byEdge[s.edge], s)
	}
	n := 0
	var all []string
	for _, ss := range byEdge {
		m, ids := regressions(ss)
		n += m
		for _, id := range ids {
			if !slices.Contains(all, id) {
				all = append(all, id)
			}
		}
	}
	slices.Sort(all)
	return n, all
}

func (r *report) analyseKey(k *key) {
	for _, p := range checkLimit(k.log, k.limit, r.o.window) {
		r.limitCount++
		if len(r.limitProblems) < maxMessages {
			r.limitProblems = append(r.limitProblems, k.name+": "+p)
		}
	}
	if k.token == "" {
		for _, e := range k.log {
			r.bad[e.out]++
		}
		return
	}
	r.tokens++
	if k.limit != r.o.limit {
		r.ownLimits++
	}
	if slices.ContainsFunc(k.log, func(e exchange) bool { return e.out == refused }) {
		r.overLimit++
		if k.hot {
			r.hotOver++
		}
	}
}

// regressions counts the answers that name a snapshot older than one an answer received
// before they were sent had named: once the edge has served a snapshot, it never serves an
// older one (D27; snapshot ids sort in build order). It also returns every id named.
func regressions(seen []sighting) (int, []string) {
	first := map[string]int64{} // id -> when an answer first named it
	for _, s := range seen {
		if t, ok := first[s.id]; !ok || s.recv < t {
			first[s.id] = s.recv
		}
	}
	ids := make([]string, 0, len(first))
	for id := range first {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return first[ids[i]] < first[ids[j]] })
	newest := make([]string, len(ids)) // newest[i]: the newest of ids[:i+1]
	for i, id := range ids {
		newest[i] = id
		if i > 0 && newest[i-1] > id {
			newest[i] = newest[i-1]
		}
	}
	n := 0
	for _, s := range seen {
		// The ids first named by an answer received before s was sent.
		i := sort.Search(len(ids), func(i int) bool { return first[ids[i]] >= s.send })
		if i > 0 && newest[i-1] > s.id {
			n++
		}
	}
	slices.Sort(ids)
	return n, ids
}

// ok says whether every check passed.
func (r *report) ok() bool {
	for _, c := range r.checks() {
		if !c.ok {
			return false
		}
	}
	return true
}

type checkLine struct {
	name, result string
	ok           bool
}

func (r *report) checks() []checkLine {
	failed := r.fails.counts[failConn] + r.fails.counts[fail5xx] + r.fails.counts[failStatus] + r.fails.counts[failMalformed]
	c := []checkLine{
		{"failed requests (no answer, 5xx, unexpected status, malformed)", r.failedDetail(failed), failed == 0},
		{"answers mixing snapshots (body, ETag or 304 not the named snapshot's)", strconv.Itoa(r.fails.counts[failMixed]), r.fails.counts[failMixed] == 0},
		{"answers naming a snapshot older than one already served (by the same edge)", strconv.Itoa(r.regressions), r.regressions == 0},
		{"answers that could not be verified (manifest unreadable)", strconv.Itoa(r.fails.counts[failUnverified]), r.fails.counts[failUnverified] == 0},
		{"rate-limit violations (over the limit, refused below it, wrong Remaining)", strconv.Itoa(r.limitCount), r.limitCount == 0},
		{"tokens that met their limit (the limit was exercised)", fmt.Sprintf("%d of %d (%d of %d hot)", r.overLimit, r.tokens, r.hotOver, r.o.hot), r.overLimit > 0},
		{"distinct snapshots served (a swap was exercised)", strconv.Itoa(len(r.snapshots)), len(r.snapshots) >= 2},
	}
	mb := func(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }
	for i, s := range r.rss {
		edge := "edge"
		if len(r.rss) > 1 {
			edge = fmt.Sprintf("edge %d (pid %d)", i+1, r.o.edgePIDs[i])
		}
		if r.rssErr[i] != nil {
			c = append(c, checkLine{edge + " memory", r.rssErr[i].Error(), false})
			continue
		}
		c = append(c, checkLine{
			fmt.Sprintf("%s RSS growth after the %s warm-up (at most %.0f%%)", edge, r.o.warmup, 100*r.o.maxGrowth),
			fmt.Sprintf("%+.1f%%: start %s, end %s, max %s", 100*s.growth, mb(s.startKB), mb(s.endKB), mb(s.maxKB)),
			s.growth <= r.o.maxGrowth,
		})
	}
	return c
}

func (r *report) failedDetail(n int) string {
	if n == 0 {
		return "0"
	}
	var parts []string
	for _, k := range []string{failConn, fail5xx, failStatus, failMalformed} {
		if r.fails.counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", r.fails.counts[k], k))
		}
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}

// print writes the report: the traffic, the checks, and the first problems found.
func (r *report) print(w io.Writer) {
	o := r.o
	fmt.Fprintf(w, "soak: %.1f s of traffic to %s (%d edges): %d workers, %d tokens (%d hot, %d with limits of their own), limit %d per %s\n",
		r.elapsed.Seconds(), o.base, len(o.edgePIDs), o.concurrency, r.tokens, o.hot, r.ownLimits, o.limit, o.window)
	r.printCounts(w)
	fmt.Fprintf(w, "bad credentials from %s: %d answered 401, %d answered 429 (the address's limit on failures)\n",
		o.badAddr, r.bad[accepted], r.bad[refused])
	fmt.Fprintf(w, "snapshots served: %d, from %s to %s\n", len(r.snapshots), first(r.snapshots), last(r.snapshots))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tresult\t")
	for _, c := range r.checks() {
		verdict := "ok"
		if !c.ok {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.name, c.result, verdict)
	}
	tw.Flush()
	for _, m := range append(slices.Clone(r.fails.first), r.limitProblems...) {
		fmt.Fprintln(w, "  ", m)
	}
}

// printCounts writes the requests by kind and status; "none" counts requests that got no
// answer.
func (r *report) printCounts(w io.Writer) {
	var statuses []int
	for _, m := range r.counts {
		for st := range m {
			if !slices.Contains(statuses, st) {
				statuses = append(statuses, st)
			}
		}
	}
	slices.Sort(statuses)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "kind\ttotal\t")
	for _, st := range statuses {
		if st == 0 {
			fmt.Fprint(tw, "none\t")
		} else {
			fmt.Fprintf(tw, "%d\t", st)
		}
	}
	fmt.Fprintln(tw)
	all := map[int]int{}
	for _, kind := range append(kinds, "all") {
		m := r.counts[kind]
		if kind == "all" {
			m = all
		}
		total := 0
		for st, n := range m {
			total += n
			if kind != "all" {
				all[st] += n
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t", kind, total)
		for _, st := range statuses {
			fmt.Fprintf(tw, "%d\t", m[st])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func first(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return s[0]
}

func last(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return s[len(s)-1]
}
