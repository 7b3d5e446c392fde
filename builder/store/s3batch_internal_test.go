package store

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// openS3 opens and creates a fresh bucket of the test MinIO, reached through endpoint when
// it is not empty.
func openS3(t *testing.T, endpoint string) *S3 {
	t.Helper()
	ctx := context.Background()
	cfg := testkit.NewS3Store(t)
	if endpoint != "" {
		cfg.Endpoint = endpoint
	}
	s, err := NewS3(ctx, Options(cfg))
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	if err := s.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return s
}

// assertUnsupportedLeavesNothing sends two batches and wants each refused with
// ErrBatchUnsupported and the store left empty.
func assertUnsupportedLeavesNothing(t *testing.T, s *S3) {
	t.Helper()
	ctx := context.Background()
	for i := range 2 {
		err := s.PutBatch(ctx, []Object{{Key: "objects/aa/one.json", Body: []byte("1")}})
		if !errors.Is(err, ErrBatchUnsupported) {
			t.Fatalf("PutBatch #%d = %v; want ErrBatchUnsupported", i+1, err)
		}
	}
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(keys) != 0 {
		t.Errorf("store holds %q after refused batches; want nothing", keys)
	}
}

// TestPutBatchNotExtracted: a server that stores the archive as an object instead of
// extracting it (here MinIO itself, asked with metadata it does not act on) is found out by
// the first batch, the archive is deleted, and no later batch is sent.
func TestPutBatchNotExtracted(t *testing.T) {
	s := openS3(t, "")
	s.batch.metadata = map[string]string{"Not-Extracted": "true"}
	assertUnsupportedLeavesNothing(t, s)
}

// TestPutBatchNotMinIO: a server that does not say it is MinIO gets no batch at all. The
// test MinIO sits behind a proxy that names the server otherwise, as AWS S3 would.
func TestPutBatchNotMinIO(t *testing.T) {
	minio, err := url.Parse(testkit.NewS3Store(t).Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(minio)
	proxy.ModifyResponse = func(r *http.Response) error {
		r.Header.Set("Server", "AmazonS3")
		return nil
	}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	assertUnsupportedLeavesNothing(t, openS3(t, srv.URL))
}
