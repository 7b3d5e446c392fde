package gzipbody

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"sync"
	"testing"
)

// TestAppendRoundTrip reads Append's output with the standard library's reader, which is
// what a client's gzip is held to, and checks that dst's bytes stay in front.
func TestAppendRoundTrip(t *testing.T) {
	bodies := []string{"", "{}", `{"data":[]}`, strings.Repeat(`{"id":"1","name":"Course"},`, 2000)}
	for _, body := range bodies {
		out := Append([]byte("prefix"), []byte(body))
		if !bytes.HasPrefix(out, []byte("prefix")) {
			t.Fatalf("Append dropped dst: %q", out[:min(len(out), 10)])
		}
		zr, err := gzip.NewReader(bytes.NewReader(out[len("prefix"):]))
		if err != nil {
			t.Fatalf("body of %d bytes: not gzip: %v", len(body), err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("body of %d bytes: %v", len(body), err)
		}
		if string(got) != body {
			t.Fatalf("body of %d bytes came back as %d bytes", len(body), len(got))
		}
	}
}

// TestAppendConcurrent compresses different bodies at once: a pooled writer must never be
// shared by two requests (run with -race).
func TestAppendConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat(string(rune('a'+i)), 1000+i)
			for range 50 {
				zr, err := gzip.NewReader(bytes.NewReader(Append(nil, []byte(body))))
				if err != nil {
					t.Error(err)
					return
				}
				if got, _ := io.ReadAll(zr); string(got) != body {
					t.Errorf("writer %d: got another body back", i)
					return
				}
			}
		}()
	}
	wg.Wait()
}
