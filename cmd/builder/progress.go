package main

import (
	"fmt"
	"io"
	"time"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/builder/publish"
)

// progressBar redraws one status line in place on a terminal. It is told about progress by
// builder.Run, whose calls are serialised.
type progressBar struct {
	w        io.Writer
	rendered int       // documents rendered so far
	last     time.Time // of the last redraw, to redraw at most 10 times a second
	phase    string
}

func newProgressBar(w io.Writer) *progressBar { return &progressBar{w: w} }

func (b *progressBar) update(p publish.Progress) {
	if p.Phase == builder.PhaseWaiting {
		return // cmdRun prints a line of its own for the wait
	}
	if p.Phase == builder.PhaseRendering && p.Total > 0 {
		b.rendered = p.Done
	}
	now := time.Now()
	final := p.Phase == publish.PhaseUploading && p.Done == p.Total
	if p.Phase == b.phase && !final && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.phase, b.last = p.Phase, now
	line := p.Phase + "…"
	if b.rendered > 0 {
		line += fmt.Sprintf("  %d documents rendered", b.rendered)
	}
	if p.Phase == publish.PhaseUploading {
		line += fmt.Sprintf(", %d of %d new objects stored", p.Done, p.Total)
	}
	// \r returns to the start of the line and \x1b[K clears what the previous draw left.
	fmt.Fprintf(b.w, "\r\x1b[K%s", line)
}

// finish clears the line so that messages after it start clean; nil does nothing.
func (b *progressBar) finish() {
	if b == nil {
		return
	}
	fmt.Fprint(b.w, "\r\x1b[K")
}
