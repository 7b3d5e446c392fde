package queue

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
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
	return newRiverLogger(l, func(d time.Duration, f func()) { time.AfterFunc(d, f) })
}

// newRiverLogger is riverLogger with the windows closed by after (the tests close them
// themselves).
func newRiverLogger(l *slog.Logger, after func(time.Duration, func())) *slog.Logger {
	explained := explainHandler{Handler: l.With("component", "river").Handler(), ours: l}
	return slog.New(newFolder(explained, foldWindow, after))
}

// explainHandler follows River's fetch errors with a line that says what they mean and what
// to do: River's own says neither.
type explainHandler struct {
	slog.Handler
	ours *slog.Logger
}

func (h explainHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	// Not after a window's count (folds.close): it comes up to a window after the errors,
	// the primary may have answered since, and the explanation says deliveries wait.
	if strings.HasSuffix(r.Message, ": Error fetching jobs") && ctx.Value(summary{}) == nil {
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

// folder is a slog.Handler that logs a message (at a level, with its attributes and its
// logger's) once per window: the repeats within it are counted, and logged as one line when
// the window closes. The attributes that change at every repeat (volatile) are not the
// message's: records that differ only in them are folded, and the count carries the last.
type folder struct {
	next  slog.Handler
	scope string // the attributes and groups of next's logger (WithAttrs, WithGroup), as fold keys write them
	*folds
}

// volatile are the keys of River's record attributes that change from one repeat to the
// next: an error's text (a connection's local port, a timeout's duration), an attempt's
// number and its backoff (the elector's). Another queue, client or job is another message.
var volatile = []string{"err", "error", "attempt", "sleep_duration"}

// summary marks the context of a window's count (folds.close), which explainHandler does
// not explain.
type summary struct{}

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
	scope := h.scope
	for _, a := range as {
		scope += keyAttr(a)
	}
	return folder{next: h.next.WithAttrs(as), scope: scope, folds: h.folds}
}

func (h folder) WithGroup(name string) slog.Handler {
	return folder{next: h.next.WithGroup(name), scope: h.scope + " group " + strconv.Quote(name), folds: h.folds}
}

func (h folder) Handle(ctx context.Context, r slog.Record) error {
	if h.fold(h.next, h.key(r), r) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// key is what r's repeats share: its level, its message, its logger's attributes and its
// own but the volatile ones.
func (h folder) key(r slog.Record) string {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + strconv.Quote(r.Message) + h.scope + " record")
	r.Attrs(func(a slog.Attr) bool {
		if !slices.Contains(volatile, a.Key) {
			b.WriteString(keyAttr(a))
		}
		return true
	})
	return b.String()
}

// keyAttr writes a as a fold key holds it.
func keyAttr(a slog.Attr) string {
	return " " + strconv.Quote(a.Key) + "=" + strconv.Quote(a.Value.Resolve().String())
}

// fold counts r when key's window is open, and otherwise opens one (r is then logged).
func (s *folds) fold(next slog.Handler, key string, r slog.Record) bool {
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
// repeats stop, the count comes at most a window after them. It is logged with summary in
// its context: not explained again.
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
	_ = f.next.Handle(context.WithValue(context.Background(), summary{}, true), r)
}
