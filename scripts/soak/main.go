// Command soak is the load generator and checker of make soak and make soak-cluster
// (scripts/soak.sh). For a fixed time it sends mixed traffic to one edge on loopback, or to a
// load balancer in front of several edges (documents plain and compressed, HEAD,
// conditional requests, searches, unknown ids, bad credentials) from many tokens at once,
// while the builder publishes new snapshots, and checks every answer:
//
//   - no connection error, no 5xx, no status the request cannot get;
//   - no answer mixes snapshots: the body (decompressed) and the ETag of a document, and the
//     tag a 304 confirms, are those of the document in the snapshot X-Catalogue-Snapshot
//     names, read from that snapshot's manifest in the store; and no answer names a snapshot
//     older than one an earlier answer from the same edge already named (-edge-header names
//     the header a load balancer tells the edges apart by: each edge polls the store on its
//     own, so two edges may be a snapshot apart);
//   - the rate limit holds exactly, per token (at the token's own limit when the tokens file
//     gives one) and per address for failed authentication (checkLimit), with the Remaining
//     header right on every accepted request: behind a load balancer, across every edge;
//   - each edge's resident memory after the warm-up does not grow by more than -max-growth.
//
// A few tokens are hot (sent every -hot-pace, so they exceed their limit); the others are
// paced to stay below it; bad credentials come from a second loopback address, so that its
// limit on failed authentication never touches the good tokens.
//
//	soak -base URL -tokens FILE -revoked FILE -edge-pid PID[,PID...] [-duration 60s] [-concurrency 64] ...
//
// The store comes from the usual configuration (CATALOGUE_STORE_URL, CATALOGUE_STORE_ENDPOINT,
// AWS_* credentials). It prints a report and exits 1 when a check fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
)

// errFailed means a check failed; the report says which.
var errFailed = errors.New("a check failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	base, tokensFile, revokedFile, badAddr string
	edgeHeader                             string
	edgePIDs                               []int
	concurrency, hot, limit                int
	duration, warmup, window, hotPace      time.Duration
	maxGrowth                              float64
	seed                                   uint64
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.StringVar(&o.base, "base", "", "the edge's base URL, on 127.0.0.1 (http://127.0.0.1:PORT/api/v2)")
	fs.StringVar(&o.tokensFile, "tokens", "", "file of good tokens, one a line")
	fs.StringVar(&o.revokedFile, "revoked", "", "file holding one revoked token")
	fs.StringVar(&o.badAddr, "bad-addr", "127.0.0.2", "loopback address the bad credentials are sent from")
	fs.Func("edge-pid", "the process ids of the edges, comma-separated, whose memory is sampled", func(s string) error {
		for _, f := range strings.Split(s, ",") {
			pid, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || pid <= 0 {
				return fmt.Errorf("want process ids, comma-separated (got %q)", s)
			}
			o.edgePIDs = append(o.edgePIDs, pid)
		}
		return nil
	})
	fs.StringVar(&o.edgeHeader, "edge-header", "", "the response header that names the edge behind a load balancer (empty: one edge)")
	fs.IntVar(&o.concurrency, "concurrency", 64, "requests in flight: one worker sends bad credentials, the others good tokens")
	fs.IntVar(&o.hot, "hot", 10, "tokens sent hot, every -hot-pace, so that they exceed the limit")
	fs.DurationVar(&o.hotPace, "hot-pace", 10*time.Millisecond, "the pause of a hot token between an answer and its next request (0: none)")
	fs.IntVar(&o.limit, "rate-limit", 60, "the edge's edge.rate_limit, the limit of tokens the tokens file gives none")
	fs.DurationVar(&o.window, "window", time.Minute, "the window of the rate limit")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to send traffic")
	fs.DurationVar(&o.warmup, "warmup", 10*time.Second, "time before the first memory sample that counts")
	fs.Float64Var(&o.maxGrowth, "max-growth", 0.20, "largest growth of the edge's memory from the warm-up to the end")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the traffic's random choices")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	u, err := url.Parse(o.base)
	switch {
	case err != nil || u.Hostname() != "127.0.0.1":
		return o, fmt.Errorf("-base must be an http URL on 127.0.0.1 (got %q)", o.base)
	case o.tokensFile == "" || o.revokedFile == "" || len(o.edgePIDs) == 0:
		return o, errors.New("-tokens, -revoked and -edge-pid are required")
	case o.hot < 1 || o.concurrency < o.hot+2:
		return o, fmt.Errorf("-concurrency (%d) must leave a worker for bad credentials and one for paced tokens beside the %d hot ones", o.concurrency, o.hot)
	case o.limit < 1 || o.window <= 0 || o.duration <= 0 || o.hotPace < 0:
		return o, errors.New("-rate-limit, -window and -duration must be positive, -hot-pace not negative")
	}
	o.base = strings.TrimSuffix(o.base, "/")
	return o, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Options(cfg.Store))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	m, err := snapshot.ReadCurrent(ctx, st)
	if err != nil {
		return err
	}
	cat, err := newCatalogue(m)
	if err != nil {
		return err
	}
	workers, err := newWorkers(o, cat, newManifests(st))
	if err != nil {
		return err
	}
	rep := soak(ctx, o, workers)
	rep.print(out)
	if !rep.ok() {
		return errFailed
	}
	return nil
}

// requestTimeout bounds one request; an answer slower than this counts as a failure.
const requestTimeout = 15 * time.Second

// newClient returns a client whose connections start from the loopback address src and
// which leaves compression to the caller, so that the gzip body is seen as sent.
func newClient(conns int, src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: requestTimeout,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			DisableCompression:  true,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// soak runs the workers until the duration is over, sampling the edges' memory meanwhile,
// and returns what they saw.
func soak(ctx context.Context, o options, workers []*worker) *report {
	rctx, stopRSS := context.WithCancel(ctx)
	rss := make([]chan rssResult, len(o.edgePIDs))
	for i, pid := range o.edgePIDs {
		rss[i] = make(chan rssResult, 1)
		go func() {
			s, err := sampleRSS(rctx, pid, time.Second)
			rss[i] <- rssResult{s, err}
		}()
	}
	start := time.Now()
	done := make(chan struct{})
	for _, w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			w.run(ctx, start.Add(o.duration))
		}()
	}
	for range workers {
		<-done
	}
	elapsed := time.Since(start)
	stopRSS()
	results := make([]rssResult, len(rss))
	for i, c := range rss {
		results[i] = <-c
	}
	return analyse(o, workers, elapsed, results)
}
