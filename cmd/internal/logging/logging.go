// Package logging makes the commands' loggers: JSON lines, one object per line (time, level,
// msg, then the fields), with durations written as Go durations ("10s", "250ms") rather than
// slog's nanoseconds, which nobody reads at a glance.
package logging

import (
	"io"
	"log/slog"
)

// New returns a logger writing JSON lines to w at info level and above.
func New(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: durations}))
}

// durations writes a time.Duration as its String form.
func durations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
