package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writes records each Write its writer receives, and signals each on wrote.
type writes struct {
	mu    sync.Mutex
	got   []string
	wrote chan struct{}
}

func newWrites() *writes { return &writes{wrote: make(chan struct{}, 100)} }

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.got = append(w.got, string(p))
	w.mu.Unlock()
	w.wrote <- struct{}{}
	return len(p), nil
}

func (w *writes) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := w.got
	w.got = nil
	return got
}

// TestLogWriterOrder: request lines wait in the batch; any other line writes the batch, then
// itself; a request line that does not fit writes the batch first; one longer than a whole
// batch goes alone; Flush writes what is left.
func TestLogWriterOrder(t *testing.T) {
	out := newWrites()
	w := newLogWriter(out, 16, time.Hour)
	batch := w.batch()
	steps := []struct {
		name      string
		write     func() error
		wantCalls []string
	}{
		{"request line", line(batch, "r1\n"), nil},
		{"request line", line(batch, "r2\n"), nil},
		{"other line", line(w, "warn\n"), []string{"r1\nr2\n", "warn\n"}},
		{"other line, empty batch", line(w, "info\n"), []string{"info\n"}},
		{"request line", line(batch, "0123456789\n"), nil},
		{"request line that does not fit", line(batch, "abcdef\n"), []string{"0123456789\n"}},
		{"request line longer than a batch", line(batch, strings.Repeat("x", 20)+"\n"), []string{"abcdef\n", strings.Repeat("x", 20) + "\n"}},
		{"request line", line(batch, "r3\n"), nil},
		{"flush", w.Flush, []string{"r3\n"}},
		{"flush with nothing batched", w.Flush, nil},
	}
	for i, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("step %d (%s): %v", i, st.name, err)
		}
		if diff := cmp.Diff(st.wantCalls, out.take()); diff != "" {
			t.Errorf("step %d (%s): writes mismatch (-want +got):\n%s", i, st.name, diff)
		}
	}
}

// line returns a step that writes s to w.
func line(w io.Writer, s string) func() error {
	return func() error {
		n, err := w.Write([]byte(s))
		if err == nil && n != len(s) {
			return fmt.Errorf("Write(%q) = %d, want %d", s, n, len(s))
		}
		return err
	}
}

// TestLogWriterDelay: a batched request line is written by itself after the delay.
func TestLogWriterDelay(t *testing.T) {
	out := newWrites()
	w := newLogWriter(out, 1<<10, time.Millisecond)
	if _, err := w.batch().Write([]byte("r1\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-out.wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("the batched line was not written 10 s after it was batched with a 1 ms delay")
	}
	if diff := cmp.Diff([]string{"r1\n"}, out.take()); diff != "" {
		t.Errorf("writes mismatch (-want +got):\n%s", diff)
	}
}
