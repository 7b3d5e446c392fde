package main

import (
	"io"
	"sync"
	"time"
)

// Batching of request lines. A line per request written at once costs a write system call
// per request, about as much as the rest of a small static read; batched, a busy edge
// writes some hundred times a second. A line waits at most batchDelay.
const (
	batchSize  = 64 << 10
	batchDelay = 100 * time.Millisecond
)

// logWriter is the edge's log output. Request lines (batch) are gathered and written
// together, when batchSize is reached or batchDelay after the first of them; every other
// line (Write: start, snapshot loads, warnings, errors) is written at once, after the
// lines batched before it, so that the output keeps the order lines were logged in and
// nothing but request lines waits. A line is never split between two writes, so the
// output is whole lines even where other writers share it.
type logWriter struct {
	mu    sync.Mutex
	out   io.Writer
	buf   []byte // request lines not written yet; its capacity is the batch size
	delay time.Duration
	timer *time.Timer // flushes buf delay after its first line; stopped while buf is empty
}

// newLogWriter returns a logWriter onto out that batches up to size bytes of request
// lines for at most delay.
func newLogWriter(out io.Writer, size int, delay time.Duration) *logWriter {
	w := &logWriter{out: out, buf: make([]byte, 0, size), delay: delay}
	w.timer = time.AfterFunc(time.Hour, func() { _ = w.Flush() })
	w.timer.Stop()
	return w
}

// Write writes p, one log line, at once, after the request lines batched before it.
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flushLocked(); err != nil {
		return 0, err
	}
	return w.out.Write(p)
}

// batch returns the writer of request lines (edge.Options.RequestLog).
func (w *logWriter) batch() io.Writer { return batchWriter{w} }

// Flush writes the batched request lines now; the command calls it before it exits.
func (w *logWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *logWriter) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	w.timer.Stop()
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0] // on error too: the lines cannot be written, and must not pile up
	return err
}

// batchWriter adds request lines to its logWriter's batch.
type batchWriter struct{ w *logWriter }

// Write adds p, one log line, to the batch; the batch before it is written first when p
// would not fit, and a line longer than a whole batch is written at once.
func (b batchWriter) Write(p []byte) (int, error) {
	w := b.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf)+len(p) > cap(w.buf) {
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > cap(w.buf) {
			return w.out.Write(p)
		}
	}
	if len(w.buf) == 0 {
		w.timer.Reset(w.delay)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}
