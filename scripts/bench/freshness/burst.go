package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// burstClasses picks the capped upcoming public classes of public courses the burst
// registers into.
const burstClasses = `
SELECT cl.id
FROM classes cl
JOIN courses co ON co.id = cl.course_id AND co.is_public
WHERE cl.is_public AND cl.start_date >= CURRENT_DATE + 7 AND cl.seat_limit IS NOT NULL
ORDER BY cl.id
LIMIT 200`

// openSeats are the open seats of the classes $1 as their documents must show them (D6).
const openSeats = `
SELECT cl.id, GREATEST(cl.seat_limit - (SELECT COUNT(*) FROM registrations rg WHERE rg.class_id = cl.id), 0)
FROM classes cl
WHERE cl.id = ANY($1)`

// burst commits o.burst registrations over o.burstFor and measures how long after the last
// commit the edge serves all of them, and how many builds that took.
func burst(ctx context.Context, conn *pgx.Conn, e *edge, o options) error {
	rows, err := conn.Query(ctx, burstClasses)
	if err != nil {
		return err
	}
	classes, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(classes) == 0 {
		return fmt.Errorf("pick the burst's classes: %d found, %v", len(classes), err)
	}
	buildsBefore, err := builds(ctx, o.builderMetrics)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, 2))
	var ids []int64
	touched := map[int64]bool{}
	began := time.Now()
	step := o.burstFor / time.Duration(o.burst)
	var last time.Time
	for i := range o.burst {
		time.Sleep(time.Until(began.Add(time.Duration(i) * step)))
		c := classes[r.IntN(len(classes))]
		var id int64
		if err := conn.QueryRow(ctx, `INSERT INTO registrations (class_id) VALUES ($1) RETURNING id`, c).Scan(&id); err != nil {
			return fmt.Errorf("burst registration %d: %w", i+1, err)
		}
		last = time.Now()
		ids, touched[c] = append(ids, id), true
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `DELETE FROM registrations WHERE id = ANY($1)`, ids); err != nil {
			fmt.Fprintln(logOut, "freshness: deleting the burst's registrations:", err)
		}
	}()
	want, err := expectedSeats(ctx, conn, touched)
	if err != nil {
		return err
	}
	served, err := waitAll(ctx, e, want, last, o.timeout)
	if err != nil {
		return err
	}
	buildsAfter, err := builds(ctx, o.builderMetrics)
	if err != nil {
		return err
	}
	fmt.Printf("burst_n=%d\nburst_spread=%.2f\nburst_classes=%d\nburst_served=%.3f\nburst_builds=%d\n",
		o.burst, last.Sub(began).Seconds(), len(touched), served.Seconds(), buildsAfter-buildsBefore)
	return nil
}

// expectedSeats reads the open seats of the classes touched.
func expectedSeats(ctx context.Context, conn *pgx.Conn, touched map[int64]bool) (map[int64]int64, error) {
	var ids []int64
	for id := range touched {
		ids = append(ids, id)
	}
	rows, err := conn.Query(ctx, openSeats, ids)
	if err != nil {
		return nil, err
	}
	want := map[int64]int64{}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		want[id] = n
	}
	return want, rows.Err()
}

// waitAll polls every class of want, 8 at a time, until the edge shows each one's open seats
// as want has them, and returns the time since since.
func waitAll(ctx context.Context, e *edge, want map[int64]int64, since time.Time, timeout time.Duration) (time.Duration, error) {
	pending := want
	for {
		var mu sync.Mutex
		next := map[int64]int64{}
		sem := make(chan struct{}, 8)
		var wg sync.WaitGroup
		for id, n := range pending {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				status, b, err := e.get(ctx, "/public/class/"+strconv.FormatInt(id, 10))
				if err != nil || status != 200 || !isNumber(field(b, "open_seats"), n) {
					mu.Lock()
					next[id] = n
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(next) == 0 {
			return time.Since(since), nil
		}
		if time.Since(since) > timeout {
			return 0, fmt.Errorf("burst: %d classes not served within %v", len(next), timeout)
		}
		pending = next
		time.Sleep(pollEvery)
	}
}

// builds returns the sum of catalogue_builder_builds_total at url (0 without one).
func builds(ctx context.Context, url string) (int, error) {
	if url == "" {
		return 0, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read builder metrics: %w", err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "catalogue_builder_builds_total{") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n, sc.Err()
}
