// Command ceiling is the benchmark's upper bound for a static read: a bare net/http handler
// that writes one fixed byte slice, read from a file at start, for every request. Nothing the
// edge does (routing, token check, rate limit, ETag, snapshot lookup) happens here, so the
// ratio edge/ceiling says what those cost on top of Go's HTTP server itself.
//
//	ceiling -addr 127.0.0.1:8091 -file doc.json [-gzip doc.json.gz]
//
// With -gzip, a request whose Accept-Encoding mentions gzip gets the compressed bytes with
// Content-Encoding: gzip, as the edge and nginx (gzip_static) answer it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ceiling", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8091", "address to listen on")
	file := fs.String("file", "", "the document to serve")
	gzFile := fs.String("gzip", "", "the same document gzip-compressed (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	plain, err := os.ReadFile(*file)
	if err != nil {
		return fmt.Errorf("read document: %w", err)
	}
	var gz []byte
	if *gzFile != "" {
		if gz, err = os.ReadFile(*gzFile); err != nil {
			return fmt.Errorf("read compressed document: %w", err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: handler(plain, gz), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	fmt.Printf("ceiling listening addr=%s bytes=%d gzip_bytes=%d\n", ln.Addr(), len(plain), len(gz))
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// handler writes plain, or gz to clients that accept gzip when gz is not empty. The header
// values are built once so that a request costs only the write.
func handler(plain, gz []byte) http.Handler {
	plainLen := []string{strconv.Itoa(len(plain))}
	gzLen := []string{strconv.Itoa(len(gz))}
	jsonType := []string{"application/json"}
	gzipEnc := []string{"gzip"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = jsonType
		if len(gz) > 0 && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h["Content-Encoding"] = gzipEnc
			h["Content-Length"] = gzLen
			_, _ = w.Write(gz)
			return
		}
		h["Content-Length"] = plainLen
		_, _ = w.Write(plain)
	})
}
