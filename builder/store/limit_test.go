package store_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
)

// TestGetMax: an object of up to max bytes is returned whole; a larger one is refused with
// ErrTooLarge rather than read.
func TestGetMax(t *testing.T) {
	eachStore(t, true, func(t *testing.T, ctx context.Context, _ config.Store, s store.Store) {
		body := strings.Repeat("x", 100)
		if err := s.Put(ctx, "objects/big.json", []byte(body)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetMax(ctx, "objects/big.json", 100); err != nil || string(got) != body {
			t.Errorf("GetMax(100 bytes, max 100) = %d bytes, %v; want the 100 bytes", len(got), err)
		}
		if got, err := s.GetMax(ctx, "objects/big.json", 99); !errors.Is(err, store.ErrTooLarge) {
			t.Errorf("GetMax(100 bytes, max 99) = %d bytes, %v; want ErrTooLarge", len(got), err)
		}
		if _, err := s.GetMax(ctx, "objects/none.json", 99); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetMax(missing) = %v; want ErrNotFound", err)
		}
	})
}

// TestS3TrustsNoContentLength: a store (or anything between it and the edge) that announces
// an object of 4 EiB makes Get fail with an error, not allocate what it says (a panic or the
// process killed for its memory), and GetMax refuses it from the header alone.
func TestS3TrustsNoContentLength(t *testing.T) {
	// Credentials of their own: the request must not depend on, or look for, any others.
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // answer one request, then close: the body ends long before its length
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4611686018427387904\r\n\r\n{}"))
			}()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := store.Open(ctx, store.Options{URL: "s3://bucket/catalogue", Endpoint: "http://" + ln.Addr().String(), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(ctx, "current.json"); err == nil {
		t.Errorf("Get of a body shorter than its Content-Length = %q; want an error", b)
	}
	if _, err := s.GetMax(ctx, "current.json", 1<<20); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("GetMax(max 1 MiB) of a 4 EiB object = %v; want ErrTooLarge", err)
	}
}
