// Command freshness measures, for make bench, how long a change committed in the database
// takes to be served by an edge: builder serve and an edge run with their default freshness
// settings, and this program commits changes on the primary and polls the edge until it
// answers with each one.
//
//	freshness -db URL -edge URL -token T [-poll 1s] [-rounds 5] [-burst 1000 -burst-seconds 10] [-builder-metrics URL] [-feed-samples N]
//
// The mix, repeated -rounds times (one change at a time, each waited for): a registration
// added, the same one removed, a class's cost, its course renamed, the class hidden and
// shown again, its room renamed, a new class. Every change is its own transaction, and
// its time runs from the return of its COMMIT to the first edge answer that shows it. Each
// is committed a random time within -poll (the edge's edge.poll_interval) after the previous
// one was served (scripts/bench/pace says why).
//
// The burst commits -burst registrations, one a transaction, evenly over -burst-seconds,
// into capped classes, and measures the time from the last commit until the edge serves
// every touched class's open seats as the database counts them, and how many builds
// builder serve made meanwhile (from its /metrics).
//
// With -feed-samples N, the feeds (issue 20): the requests a partner's mirror takes to copy
// both feeds from empty, and to catch up after 100 classes changed in one transaction, then N
// times the time from COMMIT of one class's change to its item in the classes feed.
//
// It prints KEY=value lines for scripts/bench.sh.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "freshness:", err)
		os.Exit(1)
	}
}

type options struct {
	db, edge, token, builderMetrics string
	rounds, burst, feedSamples      int
	burstFor, timeout, poll         time.Duration
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("freshness", flag.ContinueOnError)
	fs.StringVar(&o.db, "db", os.Getenv("CATALOGUE_DATABASE_URL"), "the primary's URL")
	fs.StringVar(&o.edge, "edge", "", "the edge's base URL, with its base path (http://127.0.0.1:8080/api/v2)")
	fs.StringVar(&o.token, "token", "", "an API token the edge accepts")
	fs.StringVar(&o.builderMetrics, "builder-metrics", "", "builder serve's /metrics URL, to count the burst's builds")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds of the change mix")
	fs.IntVar(&o.burst, "burst", 1000, "registrations of the burst (0: no burst)")
	fs.IntVar(&o.feedSamples, "feed-samples", 0, "changes timed from COMMIT to the classes feed (0: no feeds measurement)")
	fs.DurationVar(&o.burstFor, "burst-seconds", 10*time.Second, "how long the burst's commits are spread over")
	fs.DurationVar(&o.poll, "poll", time.Second, "the edge's edge.poll_interval, over which the changes measured one at a time are spread")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "the longest one change may take to be served")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.db == "" || o.edge == "" || o.token == "" {
		return errors.New("-db, -edge and -token are required")
	}
	conn, err := pgx.Connect(ctx, o.db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	e := newEdge(o.edge, o.token)
	lat, err := mix(ctx, conn, e, o)
	if err != nil {
		return err
	}
	report(lat)
	if o.burst > 0 {
		if err := burst(ctx, conn, e, o); err != nil {
			return err
		}
	}
	if o.feedSamples > 0 {
		return feeds(ctx, conn, e, o)
	}
	return nil
}

// report prints the mix's latencies: every sample, by change, and p50, p95 and max.
func report(lat map[string][]time.Duration) {
	var all []time.Duration
	for name, l := range lat {
		all = append(all, l...)
		fmt.Printf("fresh_change_%s=%s\n", name, seconds(l))
	}
	slices.Sort(all)
	fmt.Printf("fresh_samples=%d\n", len(all))
	fmt.Printf("fresh_p50=%.3f\nfresh_p95=%.3f\nfresh_max=%.3f\n",
		quantile(all, 0.5).Seconds(), quantile(all, 0.95).Seconds(), all[len(all)-1].Seconds())
}

func seconds(l []time.Duration) string {
	s := ""
	for i, d := range l {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%.3f", d.Seconds())
	}
	return s
}

// quantile is the nearest-rank quantile q of sorted.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
