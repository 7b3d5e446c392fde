package queue

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// textLogger logs to out as text lines without their time, which the tests do not control.
func textLogger(out *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "last" {
			return slog.Attr{}
		}
		return a
	}}))
}

// TestFolderFoldsRepeats: a message repeated within the window is logged once, then its
// count when the window closes; other messages, and the same at another level, are logged
// as they come; after the window the message is logged again. River's producer logged
// "Error fetching jobs" five times a second while the primary was unreachable (an
// operator's review: 72 of 96 lines in 15 s).
func TestFolderFoldsRepeats(t *testing.T) {
	var out bytes.Buffer
	var closes []func()
	log := slog.New(newFolder(textLogger(&out).Handler(), time.Minute, func(_ time.Duration, f func()) { closes = append(closes, f) }))
	producer := log.With("component", "river")
	for range 5 {
		producer.Error("producer: Error fetching jobs", "err", "connection refused")
	}
	log.Error("elector: Error attempting to elect", "err", "connection refused")
	producer.Warn("producer: Error fetching jobs", "err", "connection refused")
	want := `level=ERROR msg="producer: Error fetching jobs" component=river err="connection refused"
level=ERROR msg="elector: Error attempting to elect" err="connection refused"
level=WARN msg="producer: Error fetching jobs" component=river err="connection refused"
`
	if out.String() != want {
		t.Fatalf("within the window:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	for _, end := range closes {
		end()
	}
	want = `level=ERROR msg="producer: Error fetching jobs" component=river err="connection refused" repeated=4 within=1m0s
`
	if out.String() != want {
		t.Fatalf("the windows closed:\n%s\nwant the count of the one folded:\n%s", out.String(), want)
	}
	out.Reset()
	producer.Error("producer: Error fetching jobs", "err", "connection refused")
	if !strings.Contains(out.String(), "Error fetching jobs") {
		t.Errorf("after the window: %q, want the message logged again", out.String())
	}
}

// TestRiverLoggerSaysWhatFetchErrorsMean: River's fetch error is followed by a line of ours
// that says what it means for deliveries, once a window like River's.
func TestRiverLoggerSaysWhatFetchErrorsMean(t *testing.T) {
	var out bytes.Buffer
	log := riverLogger(textLogger(&out))
	for range 3 {
		log.ErrorContext(context.Background(), "producer: Error fetching jobs", "err", "dial tcp: connection refused", "queue", "webhooks")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "component=river") ||
		!strings.Contains(lines[1], "level=WARN") || !strings.Contains(lines[1], "cannot read its jobs on the primary (database.url)") ||
		!strings.Contains(lines[1], `error="dial tcp: connection refused"`) || strings.Contains(lines[1], "component=river") {
		t.Errorf("logged:\n%s\nwant River's line once, then ours (a warning, with the error)", out.String())
	}
}
