package main

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// key is what the edge counts requests against: a good token, or for the worker sending bad
// tokens its source address. Only its worker uses it, one request at a time.
type key struct {
	name  string        // "token 17" or "address 127.0.0.2": never the token itself
	token string        // "" for an address
	hot   bool          // sends fast enough to exceed its limit
	limit int           // accepted requests in any window
	pace  time.Duration // the least time from an answer to the key's next request
	next  time.Time     // when the key may send again
	log   []exchange
}

// worker sends requests for its keys one at a time, so that every key's requests are
// sequential, and checks every answer.
type worker struct {
	id         int
	client     *http.Client
	base       string
	window     time.Duration
	edgeHeader string
	cat        *catalogue
	ms         *manifests
	fails      *failures
	rng        *rand.Rand
	keys       []*key
	badAuth    []badAuth // non-nil for the worker sending bad tokens
	goodToken  string    // a good token, sent by that worker in the query string only

	etags  map[string]etag        // etagKey -> the last tag this worker got for it
	tagged []string               // the keys of etags, to draw from
	counts map[string]map[int]int // kind -> status (0: no answer) -> requests
	seen   []sighting             // every answer that named a snapshot
	sent   int
}

// sighting is an answer that named snapshot id; edge names the edge that answered
// (-edge-header), "" for one edge.
type sighting struct {
	send, recv int64
	id         string
	edge       string
}

// run sends requests until deadline: each time for the key that may send soonest, after
// waiting for it.
func (w *worker) run(ctx context.Context, deadline time.Time) {
	for {
		k := w.keys[0]
		for _, c := range w.keys[1:] {
			if c.next.Before(k.next) {
				k = c
			}
		}
		if !k.next.Before(deadline) || !sleepUntil(ctx, k.next) || !time.Now().Before(deadline) {
			return
		}
		w.exchange(k)
	}
}

// sleepUntil waits until t, or returns false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// exchange sends one request for k, records how the limiter treated it and checks the answer.
func (w *worker) exchange(k *key) {
	t := w.pick()
	if w.badAuth != nil {
		t = w.badToken()
	}
	req := w.request(k, t)
	send := time.Now()
	res, err := w.client.Do(req)
	recv := time.Now()
	k.next = recv.Add(k.pace)
	ex := exchange{send: send.UnixNano(), recv: recv.UnixNano(), out: unknown, remaining: -1}
	var body []byte
	if err == nil {
		body, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	if err != nil {
		w.count(t.kind, 0)
		k.log = append(k.log, ex)
		w.fails.add(failConn, "%s %s: %v", t.method, t.path, err)
		return
	}
	w.count(t.kind, res.StatusCode)
	ex.out, ex.remaining = w.limitOutcome(k, res)
	k.log = append(k.log, ex)
	a := answer{t: t, res: res, body: body, send: ex.send, recv: ex.recv, id: req.Header.Get("X-Request-Id"),
		limit: k.limit}
	if w.edgeHeader != "" {
		a.edge = res.Header.Get(w.edgeHeader)
	}
	if k.token == "" {
		w.checkBadToken(a)
		return
	}
	w.check(a)
}

// request builds the request of t for k, with an id that finds it in the edge's log.
func (w *worker) request(k *key, t target) *http.Request {
	req, err := http.NewRequest(t.method, w.base+t.path, nil)
	if err != nil {
		panic(err) // the paths are built here from fixed parts: a bad one is this program's bug
	}
	w.sent++
	req.Header.Set("X-Request-Id", "soak-"+strconv.Itoa(w.id)+"-"+strconv.Itoa(w.sent))
	switch {
	case k.token != "":
		req.Header.Set("Authorization", "Bearer "+k.token)
	case t.auth.header != "":
		req.Header.Set("Authorization", t.auth.header)
	}
	if t.gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	if t.inm.tag != "" {
		req.Header.Set("If-None-Match", t.inm.tag)
	}
	return req
}

// limitOutcome says whether the edge counted the request against k (D23): a good token's
// every answer but 429, an address's every 401. The Remaining header of a good token's
// accepted request is returned for checkLimit; -1 when there is none to check.
func (w *worker) limitOutcome(k *key, res *http.Response) (outcome, int) {
	switch {
	case res.StatusCode == http.StatusTooManyRequests:
		return refused, -1
	case k.token == "" && res.StatusCode == http.StatusUnauthorized:
		return accepted, -1
	case k.token == "":
		return unknown, -1 // an unexpected answer, reported by checkBadToken
	}
	rem, err := strconv.Atoi(res.Header.Get("X-RateLimit-Remaining"))
	if err != nil {
		rem = -1 // reported by check
	}
	return accepted, rem
}

func (w *worker) count(kind string, status int) {
	m := w.counts[kind]
	if m == nil {
		m = map[int]int{}
		w.counts[kind] = m
	}
	m[status]++
}

// remember keeps the tag of a document this worker got, to ask for it again conditionally.
func (w *worker) remember(route string, gzip bool, e etag) {
	k := etagKey(route, gzip)
	if _, ok := w.etags[k]; !ok {
		w.tagged = append(w.tagged, k)
	}
	w.etags[k] = e
}
