// Command webhooks measures, for make bench, how long a committed change takes to reach a
// partner's endpoint as a catalogue.changed delivery: builder serve runs with its default
// settings (webhooks.allow_http and allow_private on, the endpoints being on loopback), and
// this program is the endpoints, registers them, commits class changes and notes when each
// endpoint first receives a delivery naming each changed class.
//
//	webhooks -db URL [-poll 1s] [-one 20] [-endpoints 100] [-burst 50] [-slow 9s]
//
// One endpoint, -one changes one after the other, each committed a random time within -poll
// (the edge's edge.poll_interval) after the previous one was delivered: the time from each
// COMMIT's return to the delivery. Then -endpoints endpoints and -burst changes committed at once, twice: all
// endpoints answering at once, then one of them answering after -slow; every endpoint must
// get every change, and the others' p95 is compared between the two bursts.
//
// It prints KEY=value lines for scripts/bench.sh.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/scripts/bench/pace"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "webhooks:", err)
		os.Exit(1)
	}
}

// receipts records when each endpoint first heard of each class.
type receipts struct {
	mu    sync.Mutex
	first map[int]map[int64]time.Time // endpoint -> class -> first delivery naming it
	slow  map[int]time.Duration       // endpoints answering late, and how late
}

func (r *receipts) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	n, _ := strconv.Atoi(strings.TrimPrefix(req.URL.Path, "/e/"))
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var ev struct {
		Data struct {
			Classes []int64 `json:"classes"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &ev)
	r.mu.Lock()
	if r.first[n] == nil {
		r.first[n] = map[int64]time.Time{}
	}
	for _, c := range ev.Data.Classes {
		if _, ok := r.first[n][c]; !ok {
			r.first[n][c] = now
		}
	}
	delay := r.slow[n]
	r.mu.Unlock()
	time.Sleep(delay)
	w.WriteHeader(http.StatusNoContent)
}

// latencies returns, for the endpoints in eps, the time from each class's commit to its
// first delivery, and how many (endpoint, class) pairs are still missing.
func (r *receipts) latencies(eps []int, committed map[int64]time.Time) (lat []time.Duration, missing int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range eps {
		for c, at := range committed {
			got, ok := r.first[e][c]
			if !ok {
				missing++
				continue
			}
			lat = append(lat, got.Sub(at))
		}
	}
	slices.Sort(lat)
	return lat, missing
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	db := fs.String("db", "", "the primary's URL (required)")
	one := fs.Int("one", 20, "changes measured one at a time, one endpoint")
	endpoints := fs.Int("endpoints", 100, "endpoints of the bursts")
	burst := fs.Int("burst", 50, "changes committed at once in each burst")
	slow := fs.Duration("slow", 9*time.Second, "how late the slow endpoint answers in the second burst")
	poll := fs.Duration("poll", time.Second, "the edge's edge.poll_interval, over which the changes measured one at a time are spread")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *db == "" {
		return errors.New("-db is required")
	}
	conn, err := pgx.Connect(ctx, *db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	classes, err := publicClasses(ctx, conn, *one+2**burst)
	if err != nil {
		return err
	}
	rec := &receipts{first: map[int]map[int64]time.Time{}, slow: map[int]time.Duration{}}
	base, err := listen(rec)
	if err != nil {
		return err
	}
	if err := register(ctx, conn, base, 0, 1); err != nil {
		return err
	}
	committed, err := oneByOne(ctx, conn, rec, classes[:*one], pace.New(*poll))
	if err != nil {
		return err
	}
	lat, _ := rec.latencies([]int{0}, committed)
	fmt.Printf("wh_one_n=%d\nwh_one_p50=%.3f\nwh_one_p95=%.3f\nwh_one_max=%.3f\n", len(lat),
		quantile(lat, 0.5).Seconds(), quantile(lat, 0.95).Seconds(), lat[len(lat)-1].Seconds())
	if err := register(ctx, conn, base, 1, *endpoints); err != nil {
		return err
	}
	fmt.Printf("wh_endpoints=%d\nwh_burst_changes=%d\n", *endpoints, *burst)
	all := make([]int, *endpoints)
	for i := range all {
		all[i] = i
	}
	rest := classes[*one:]
	if err := measureBurst(ctx, conn, rec, "wh_burst", all, all, rest[:*burst]); err != nil {
		return err
	}
	rec.mu.Lock()
	rec.slow[0] = *slow
	rec.mu.Unlock()
	fmt.Printf("wh_slow_seconds=%.0f\n", slow.Seconds())
	return measureBurst(ctx, conn, rec, "wh_slow", all[1:], all, rest[*burst:2**burst])
}

// listen serves rec on a loopback port and returns its base URL.
func listen(rec *receipts) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// register adds the endpoints from..to-1 as builder webhook add does.
func register(ctx context.Context, conn *pgx.Conn, base string, from, to int) error {
	rules := webhook.Rules{AllowHTTP: true, AllowPrivate: true}
	for i := from; i < to; i++ {
		if _, _, err := webhook.Add(ctx, conn, rules, fmt.Sprintf("%s/e/%d", base, i), "bench"); err != nil {
			return err
		}
	}
	return nil
}

// publicClasses returns n served classes (public, of a public course).
func publicClasses(ctx context.Context, conn *pgx.Conn, n int) ([]int64, error) {
	rows, err := conn.Query(ctx, `SELECT c.id FROM classes c JOIN courses co ON co.id = c.course_id
		WHERE c.is_public AND co.is_public ORDER BY c.id DESC LIMIT $1`, n)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err == nil && len(ids) < n {
		err = fmt.Errorf("only %d public classes, want %d", len(ids), n)
	}
	return ids, err
}

// change commits one change of class c's document and returns when the COMMIT returned.
func change(ctx context.Context, conn *pgx.Conn, c int64) (time.Time, error) {
	_, err := conn.Exec(ctx, "UPDATE classes SET cost = cost + 1 WHERE id = $1", c)
	return time.Now(), err
}

// oneByOne commits each change a random time within the edge's poll period after the
// previous one was delivered (scripts/bench/pace says why).
func oneByOne(ctx context.Context, conn *pgx.Conn, rec *receipts, classes []int64, pacer *pace.Pacer) (map[int64]time.Time, error) {
	committed := map[int64]time.Time{}
	for _, c := range classes {
		pacer.Wait()
		at, err := change(ctx, conn, c)
		if err != nil {
			return nil, err
		}
		committed[c] = at
		if err := wait(rec, []int{0}, map[int64]time.Time{c: at}, 60*time.Second); err != nil {
			return nil, err
		}
	}
	return committed, nil
}

// measureBurst commits the changes at once and reports the latencies at the endpoints
// measured, once every endpoint of all has every change (or two minutes have passed).
func measureBurst(ctx context.Context, conn *pgx.Conn, rec *receipts, key string, measured, all []int, classes []int64) error {
	committed := map[int64]time.Time{}
	for _, c := range classes {
		at, err := change(ctx, conn, c)
		if err != nil {
			return err
		}
		committed[c] = at
	}
	complete := wait(rec, all, committed, 2*time.Minute) == nil
	lat, missing := rec.latencies(measured, committed)
	fmt.Printf("%s_complete=%t\n%s_missing=%d\n", key, complete, key, missing)
	if len(lat) > 0 {
		fmt.Printf("%s_n=%d\n%s_p50=%.3f\n%s_p95=%.3f\n%s_max=%.3f\n", key, len(lat), key, quantile(lat, 0.5).Seconds(),
			key, quantile(lat, 0.95).Seconds(), key, lat[len(lat)-1].Seconds())
	}
	return nil
}

// wait waits until every endpoint of eps has heard of every class committed.
func wait(rec *receipts, eps []int, committed map[int64]time.Time, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if _, missing := rec.latencies(eps, committed); missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("deliveries missing after %v", within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// quantile is the nearest-rank quantile q of sorted.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
