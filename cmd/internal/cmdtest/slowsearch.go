package cmdtest

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SlowSearch is a search.sql for the tests that stop an edge while searches are in flight:
// class 150 after 1.5 s, whatever the filters. It takes the eight arguments the edge passes
// (see templates/search.sql) and returns the same columns.
const SlowSearch = `-- search.sql for a shutdown test: class 150 after 1.5 s, ignoring the filters.
SELECT cl.id, cl.course_id, co.name AS course, cl.start_date, cl.end_date, co.type,
       NULL::text AS city, NULL::text AS state, cl.cost, NULL::bigint AS available_seats,
       1::bigint AS total
FROM catalogue_classes cl
JOIN catalogue_courses co ON co.id = cl.course_id
CROSS JOIN pg_sleep(1.5)
WHERE cl.id = 150
  AND $1::date IS NOT NULL AND ($2::date IS NULL OR $3::date IS NULL OR $4::date IS NULL
  OR $5::text IS NULL OR $6::bigint IS NULL OR $7::bigint > 0 OR $8::bigint >= 0)
`

// WaitSleeping waits until n queries of the database at dbURL are in SlowSearch's pg_sleep,
// that is until n searches are in flight in the edge, at most 20 s.
func WaitSleeping(t *testing.T, dbURL string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	for {
		var sleeping int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND state = 'active' AND query LIKE '%pg_sleep(1.5)%' AND pid <> pg_backend_pid()`).Scan(&sleeping)
		if err != nil {
			t.Fatalf("count searches in flight (want %d): %v", n, err)
		}
		if sleeping >= n {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling another process's progress
	}
}

// Answer is what one search in flight got: its status and body, or the error that stopped it.
type Answer struct {
	Status int
	Body   string
	Err    error
}

// SearchesInFlight sends n class searches to url with token, each in a goroutine of its own
// (t.Fatal may not be called from them), and returns at once; wait blocks until every one
// has its answer and returns them. Pair it with WaitSleeping to know they are in the edge.
func SearchesInFlight(url, token string, n int) (wait func() []Answer) {
	answers := make(chan Answer, n)
	client := &http.Client{Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { answers <- search(client, url, token) })
	}
	return func() []Answer {
		wg.Wait()
		close(answers)
		var all []Answer
		for a := range answers {
			all = append(all, a)
		}
		return all
	}
}

// search is one of SearchesInFlight's requests.
func search(client *http.Client, url, token string) Answer {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return Answer{Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return Answer{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Answer{Status: resp.StatusCode, Body: string(b), Err: err}
}
