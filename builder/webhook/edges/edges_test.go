package edges_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trainingco/catalogue/builder/webhook/edges"
)

// TestPollBound (D42, with one edge): where no edge reports in Redis, because there is none
// or it cannot be reached, a snapshot is served once edge.poll_interval and Settle have
// passed since its publication, and not a moment before: an edge may take the poll
// interval to see the new pointer and Settle to swap to it.
func TestPollBound(t *testing.T) {
	published := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	poll := 5 * time.Second
	for name, rdb := range map[string]*redis.Client{"no Redis": nil, "Redis unreachable": unreachable(t)} {
		for _, tc := range []struct {
			after time.Duration
			want  bool
		}{{0, false}, {poll, false}, {poll + edges.Settle - time.Millisecond, false}, {poll + edges.Settle, true}, {time.Hour, true}} {
			now := published.Add(tc.after)
			e := edges.Served{Redis: rdb, Prefix: "edge-served:", Poll: poll, Now: func() time.Time { return now }}
			got, err := e.Serves(context.Background(), "20261126T100000.000Z-aaaaaaaa", published)
			if got != tc.want {
				t.Errorf("%s: served %v after publication = %t (%v), want %t", name, tc.after, got, err, tc.want)
			}
			if (err != nil) != (rdb != nil) {
				t.Errorf("%s: error %v, want one exactly when Redis cannot be reached", name, err)
			}
		}
	}
}

// unreachable is a client of a Redis that refuses connections: a port just closed.
func unreachable(t *testing.T) *redis.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}
