package queue_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestHostileAnswerIsRecorded: an endpoint that answers with a status line of its own making
// (an escape sequence, a NUL, 4-byte characters) has each failure recorded, with a reason
// PostgreSQL takes: cut at 300 bytes inside a character, the reason was refused, the failure
// went unrecorded and the endpoint could be retried for ever and never disabled. The first
// four attempts are answered so, each with one more "x" in front, so that the cut falls
// inside a character in three of them; the fifth is a 200.
func TestHostileAnswerIsRecorded(t *testing.T) {
	dbURL, pool := newDatabase(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			n := accepted.Add(1) - 1
			if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
				req.Body.Close()
			}
			answer := "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"
			if n < 4 {
				answer = strings.Repeat("x", int(n)) + "\x1b[2J\x00" + strings.Repeat("😀", 100) + "\r\n\r\n"
			}
			_, _ = conn.Write([]byte(answer))
			conn.Close()
		}
	}()
	addEndpoint(t, dbURL, "http://"+ln.Addr().String()+"/hooks")
	q := startQueue(t, pool, fastConfig(), nil)
	if _, err := q.Enqueue(context.Background(), queue.Change{Snapshot: "s1", Classes: []int64{7}}); err != nil {
		t.Fatal(err)
	}
	var attempts int
	var reason *string
	testkit.WaitFor(t, 15*time.Second, "the delivery, after four failures", func() bool {
		err := pool.QueryRow(context.Background(), `SELECT d.attempts, e.last_failure_reason
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.delivered_at IS NOT NULL`).Scan(&attempts, &reason)
		return err == nil
	})
	if attempts != 5 || accepted.Load() != 5 {
		t.Errorf("%d attempts recorded for %d made, want 5 and 5 (four failures, then the delivery)", attempts, accepted.Load())
	}
	if reason == nil || !utf8.ValidString(*reason) || strings.ContainsAny(*reason, "\x1b\x00") || !strings.Contains(*reason, "malformed HTTP response") {
		t.Errorf("last failure reason %q: want the client's error, UTF-8, without control characters", deref(reason))
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
