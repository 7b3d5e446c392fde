package queue

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// foldWindow is how long a message River repeats is logged once: while the primary was
// unreachable, its producer logged "Error fetching jobs" at every fetch (five a second, at
// FetchPollInterval), some 18,000 lines an hour, and River has no setting to quiet it.
const foldWindow = time.Minute

// riverLogger is the logger River is given: its repeats folded (newFolder), and after the
// first fetch error of a window a line of ours on l saying what it means.
func riverLogger(l *slog.Logger) *slog.Logger {
	explained := explainHandler{Handler: l.With("component", "river").Handler(), ours: l}
	return slog.New(newFolder(explained, foldWindow, func(d time.Duration, f func()) { time.AfterFunc(d, f) }))
}

// explainHandler follows River's fetch errors with a line that says what they mean and what
// to do: River's own says neither.
type explainHandler struct {
	slog.Handler
	ours *slog.Logger
}

func (h explainHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if strings.HasSuffix(r.Message, ": Error fetching jobs") {
		var attrs []any
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				attrs = append(attrs, "error", a.Value.String())
			}
			return true
		})
		h.ours.WarnContext(ctx, "the webhook queue cannot read its jobs on the primary (database.url): deliveries wait, "+
			"and resume on their own when it answers; check that its server is up and reachable (River's repeats are logged once a minute)", attrs...)
	}
	return err
}

func (h explainHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return explainHandler{Handler: h.Handler.WithAttrs(as), ours: h.ours}
}

func (h explainHandler) WithGroup(name string) slog.Handler {
	return explainHandler{Handler: h.Handler.WithGroup(name), ours: h.ours}
}

// folder is a slog.Handler that logs a message (at a level) once per window: the repeats
// within it are counted, and logged as one line when the window closes.
type folder struct {
	next slog.Handler
	*folds
}

// folds are the open windows, shared by a folder and those its WithAttrs make: River's
// services log through loggers of their own attributes.
type folds struct {
	window time.Duration
	after  func(time.Duration, func()) // time.AfterFunc; the tests close windows themselves
	mu     sync.Mutex
	open   map[string]*fold
}

// fold is an open window: the handler of its first record, which logs the count, and the
// last record it folded.
type fold struct {
	next  slog.Handler
	last  slog.Record
	count int
}

func newFolder(next slog.Handler, window time.Duration, after func(time.Duration, func())) slog.Handler {
	return folder{next: next, folds: &folds{window: window, after: after, open: map[string]*fold{}}}
}

func (h folder) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h folder) WithAttrs(as []slog.Attr) slog.Handler {
	return folder{next: h.next.WithAttrs(as), folds: h.folds}
}

func (h folder) WithGroup(name string) slog.Handler {
	return folder{next: h.next.WithGroup(name), folds: h.folds}
}

func (h folder) Handle(ctx context.Context, r slog.Record) error {
	if h.fold(h.next, r) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// fold counts r when its window is open, and otherwise opens one (r is then logged).
func (s *folds) fold(next slog.Handler, r slog.Record) bool {
	key := r.Level.String() + " " + r.Message
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.open[key]; f != nil {
		f.last, f.count = r.Clone(), f.count+1
		return true
	}
	s.open[key] = &fold{next: next}
	s.after(s.window, func() { s.close(key) })
	return false
}

// close ends key's window, logging the last record it folded with their count: when the
// repeats stop, the count comes at most a window after them.
func (s *folds) close(key string) {
	s.mu.Lock()
	f := s.open[key]
	delete(s.open, key)
	s.mu.Unlock()
	if f == nil || f.count == 0 {
		return
	}
	r := slog.NewRecord(time.Now(), f.last.Level, f.last.Message, 0)
	f.last.Attrs(func(a slog.Attr) bool { r.AddAttrs(a); return true })
	r.AddAttrs(slog.Int("repeated", f.count), slog.Duration("within", s.window), slog.Time("last", f.last.Time))
	_ = f.next.Handle(context.Background(), r)
}
