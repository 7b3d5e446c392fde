package store

import (
	"context"
	"net"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// TestS3KeepsIdleConnections: the client the store really uses keeps at least 128 idle
// connections per host, so the builder's ~64 concurrent uploads reuse their connections
// instead of opening new ones (the SDK's default keeps 10). No request is made.
func TestS3KeepsIdleConnections(t *testing.T) {
	s, err := NewS3(context.Background(), Options{URL: "s3://bucket/catalogue", Endpoint: "http://127.0.0.1:9", Region: "us-east-1"})
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	hc, ok := s.client.Options().HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		t.Fatalf("HTTPClient is %T; want the SDK's *BuildableClient with our transport", s.client.Options().HTTPClient)
	}
	if tr := hc.GetTransport(); tr.MaxIdleConnsPerHost < 128 || tr.MaxIdleConns < 128 {
		t.Errorf("transport keeps MaxIdleConnsPerHost=%d MaxIdleConns=%d; want both >= 128", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
}

// TestS3RequestTimeout: a store that accepts connections and never answers makes a request
// fail (after the SDK's retries) instead of hanging the builder for ever.
func TestS3RequestTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and hold every connection, answering nothing
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	s, err := newS3(context.Background(), Options{URL: "s3://bucket/catalogue", Endpoint: "http://" + ln.Addr().String(), Region: "us-east-1"}, 300*time.Millisecond)
	if err != nil {
		t.Fatalf("newS3: %v", err)
	}
	// The test's own deadline only keeps a broken timeout from hanging the test run.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err = s.Get(ctx, "current.json")
	if err == nil {
		t.Fatal("Get from a store that never answers succeeded")
	}
	// Three attempts of 0.3 s and the SDK's backoff between them (at most a few seconds).
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Get took %v to fail; want well under 15 s", d)
	}
}
