package queue

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
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

// TestRiverLoggerSummaryIsNotExplained: the count of River's folded fetch errors, logged
// when the window closes, comes without our explanation, through the handlers as queue.New
// composes them (riverLogger): the primary may have answered for most of that minute, and
// the explanation said deliveries wait (a review of 3a06bf0: a 1-second outage logged it
// again a minute later).
func TestRiverLoggerSummaryIsNotExplained(t *testing.T) {
	var out bytes.Buffer
	var closes []func()
	log := newRiverLogger(textLogger(&out), func(_ time.Duration, f func()) { closes = append(closes, f) })
	for range 3 {
		log.Error("producer: Error fetching jobs", "err", "dial tcp: connection refused", "queue", "webhooks")
	}
	if n := strings.Count(out.String(), "cannot read its jobs"); n != 1 {
		t.Fatalf("within the window:\n%s\nwant our explanation once", out.String())
	}
	out.Reset()
	for _, end := range closes {
		end()
	}
	want := `level=ERROR msg="producer: Error fetching jobs" component=river err="dial tcp: connection refused" queue=webhooks repeated=2 within=1m0s
`
	if out.String() != want {
		t.Errorf("the window closed:\n%s\nwant River's count alone:\n%s", out.String(), want)
	}
}

// TestFolderKeepsOtherAttributes: records of a message that differ in their attributes or
// their logger's (another queue, another job) are each logged, and each window's count
// carries its own; those that differ only in what changes at every repeat (the error's
// text, an attempt's number, a backoff) are folded, the count carrying the last. The fold
// was of the level and message alone: another queue's errors were hidden for a minute, and
// their count carried the first logger's attributes (a review of 3a06bf0).
func TestFolderKeepsOtherAttributes(t *testing.T) {
	var out bytes.Buffer
	var closes []func()
	log := slog.New(newFolder(textLogger(&out).Handler(), time.Minute, func(_ time.Duration, f func()) { closes = append(closes, f) }))
	for i, q := range []string{"webhooks", "other", "webhooks", "other"} {
		err := fmt.Sprintf("read tcp 127.0.0.1:%d->127.0.0.1:5432: read: connection reset by peer", 50001+i)
		log.Error("producer: Error fetching jobs", "err", err, "queue", q)
	}
	log.With("client_id", "a").Info("River client started")
	log.With("client_id", "b").Info("River client started")
	log.With("client_id", "b").Info("River client started")
	for i := range 3 {
		log.Error("elector: Error attempting to elect", "attempt", i+1, "err", "connection refused", "sleep_duration", time.Duration(i+1)*time.Second)
	}
	want := `level=ERROR msg="producer: Error fetching jobs" err="read tcp 127.0.0.1:50001->127.0.0.1:5432: read: connection reset by peer" queue=webhooks
level=ERROR msg="producer: Error fetching jobs" err="read tcp 127.0.0.1:50002->127.0.0.1:5432: read: connection reset by peer" queue=other
level=INFO msg="River client started" client_id=a
level=INFO msg="River client started" client_id=b
level=ERROR msg="elector: Error attempting to elect" attempt=1 err="connection refused" sleep_duration=1s
`
	if out.String() != want {
		t.Fatalf("within the window:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	for _, end := range closes {
		end()
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	slices.Sort(got)
	want = `level=ERROR msg="elector: Error attempting to elect" attempt=3 err="connection refused" sleep_duration=3s repeated=2 within=1m0s
level=ERROR msg="producer: Error fetching jobs" err="read tcp 127.0.0.1:50003->127.0.0.1:5432: read: connection reset by peer" queue=webhooks repeated=1 within=1m0s
level=ERROR msg="producer: Error fetching jobs" err="read tcp 127.0.0.1:50004->127.0.0.1:5432: read: connection reset by peer" queue=other repeated=1 within=1m0s
level=INFO msg="River client started" client_id=b repeated=1 within=1m0s`
	if strings.Join(got, "\n") != want {
		t.Errorf("the windows closed:\n%s\nwant each count with its own attributes:\n%s", strings.Join(got, "\n"), want)
	}
}
