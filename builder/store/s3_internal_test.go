package store

import (
	"context"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/trainingco/catalogue/config"
)

// TestS3KeepsIdleConnections: the client the store really uses keeps at least 128 idle
// connections per host, so the builder's ~64 concurrent uploads reuse their connections
// instead of opening new ones (the SDK's default keeps 10). No request is made.
func TestS3KeepsIdleConnections(t *testing.T) {
	s, err := NewS3(context.Background(), config.Store{URL: "s3://bucket/catalogue", Endpoint: "http://127.0.0.1:9", Region: "us-east-1"})
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
