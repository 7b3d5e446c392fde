package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// edge reads documents from the edge under test.
type edge struct {
	base, token string
	client      *http.Client
}

func newEdge(base, token string) *edge {
	return &edge{base: base, token: token, client: &http.Client{Timeout: 10 * time.Second}}
}

// get returns the status and body of GET path.
func (e *edge) get(ctx context.Context, path string) (int, []byte, error) {
	return e.getURL(ctx, e.base+path)
}

// getURL returns the status and body of GET of an absolute URL (a feed's next).
func (e *edge) getURL(ctx context.Context, abs string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, abs, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// pollEvery is how often a change is looked for: its measurement is that much too long at
// worst.
const pollEvery = 10 * time.Millisecond

// waitFor polls path until seen holds for its answer and returns the time since since.
func (e *edge) waitFor(ctx context.Context, path string, since time.Time, timeout time.Duration, seen func(status int, body []byte) bool) (time.Duration, error) {
	deadline := since.Add(timeout)
	for {
		status, body, err := e.get(ctx, path)
		if err == nil && seen(status, body) {
			return time.Since(since), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s: not served within %v (last answer %d %.200s, %v)", path, timeout, status, body, err)
		}
		time.Sleep(pollEvery)
	}
}

// field decodes body and returns the value at key (a dotted path), or nil.
func field(body []byte, key ...string) any {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	for _, k := range key {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// isNumber reports whether v (decoded JSON) is the number n.
func isNumber(v any, n int64) bool {
	f, ok := v.(float64)
	return ok && f == float64(n)
}
