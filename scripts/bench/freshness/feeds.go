package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/bench/pace"
)

// feedPage is what a page of an RPDE feed (D35) holds that a partner's mirror reads.
type feedPage struct {
	Next  string     `json:"next"`
	Items []feedItem `json:"items"`
}

type feedItem struct {
	ID       int64 `json:"id"`
	Modified int64 `json:"modified"`
}

// page reads one page of a feed by its absolute URL (next, as the edge wrote it).
func (e *edge) page(ctx context.Context, abs string) (feedPage, error) {
	var p feedPage
	status, body, err := e.getURL(ctx, abs)
	if err != nil {
		return p, err
	}
	if status != 200 {
		return p, fmt.Errorf("GET %s: %d %.200s", abs, status, body)
	}
	return p, json.Unmarshal(body, &p)
}

// walk follows a feed from start as a mirror does, until a page has no items, and returns
// the requests it took, the items read and the position to follow it from.
func (e *edge) walk(ctx context.Context, start string) (requests, items int, next string, err error) {
	next = start
	for {
		p, err := e.page(ctx, next)
		if err != nil {
			return requests, items, next, err
		}
		requests++
		items += len(p.Items)
		if len(p.Items) == 0 {
			return requests, items, next, nil
		}
		next = p.Next
	}
}

// feeds measures, for issue 20's rows: the requests to mirror both feeds from an empty copy;
// the requests to catch up after 100 classes changed in one transaction; and the time from
// COMMIT of one class's change to its item in the classes feed, -feed-samples times.
func feeds(ctx context.Context, conn *pgx.Conn, e *edge, o options) error {
	var heads [2]string
	total, all := 0, 0
	for i, f := range []string{"courses", "classes"} {
		req, items, next, err := e.walk(ctx, e.base+"/public/feeds/"+f)
		if err != nil {
			return fmt.Errorf("mirror the %s feed: %w", f, err)
		}
		total, all, heads[i] = total+req, all+items, next
	}
	fmt.Printf("feeds_mirror_requests=%d\nfeeds_mirror_items=%d\n", total, all)

	at, err := exec(ctx, conn, `UPDATE classes SET schedule = 'Feeds bench at ' || clock_timestamp()
		WHERE id IN (SELECT cl.id FROM classes cl JOIN courses co ON co.id = cl.course_id AND co.is_public
		WHERE cl.is_public ORDER BY cl.id LIMIT 100)`)
	if err != nil {
		return err
	}
	if _, err := until(at, o.timeout, func() bool {
		p, err := e.page(ctx, heads[1])
		return err == nil && len(p.Items) >= 100
	}); err != nil {
		return fmt.Errorf("the 100 changed classes: %w", err)
	}
	req, items, next, err := e.walk(ctx, heads[1])
	if err != nil {
		return err
	}
	fmt.Printf("feeds_catchup_requests=%d\nfeeds_catchup_items=%d\n", req, items)
	return feedLatency(ctx, conn, e, o, next)
}

// feedLatency commits one class's change at a time, each a random time within the poll
// period after the previous one appeared (scripts/bench/pace), and polls the classes feed
// from the position before it until the class's item appears.
func feedLatency(ctx context.Context, conn *pgx.Conn, e *edge, o options, next string) error {
	change, err := os.ReadFile("scripts/bench/change_class.sql")
	if err != nil {
		return err
	}
	var lat []time.Duration
	pacer := pace.New(o.poll)
	for range o.feedSamples {
		pacer.Wait()
		var id int64
		if err := conn.QueryRow(ctx, string(change)).Scan(&id); err != nil {
			return err
		}
		d, err := until(time.Now(), o.timeout, func() bool {
			p, err := e.page(ctx, next)
			return err == nil && slices.ContainsFunc(p.Items, func(it feedItem) bool { return it.ID == id })
		})
		if err != nil {
			return fmt.Errorf("class %d in the classes feed: %w", id, err)
		}
		lat = append(lat, d)
		if _, _, next, err = e.walk(ctx, next); err != nil {
			return err
		}
	}
	slices.Sort(lat)
	fmt.Printf("feeds_commit_samples=%d\nfeeds_commit_p50=%.3f\nfeeds_commit_p95=%.3f\nfeeds_commit_max=%.3f\n",
		len(lat), quantile(lat, 0.5).Seconds(), quantile(lat, 0.95).Seconds(), lat[len(lat)-1].Seconds())
	return nil
}

// until polls seen every pollEvery until it holds and returns the time since since.
func until(since time.Time, timeout time.Duration, seen func() bool) (time.Duration, error) {
	for !seen() {
		if time.Since(since) > timeout {
			return 0, fmt.Errorf("not seen within %v", timeout)
		}
		time.Sleep(pollEvery)
	}
	return time.Since(since), nil
}
