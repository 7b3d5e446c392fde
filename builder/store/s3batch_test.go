package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// newS3 opens a fresh bucket on the test MinIO and creates it.
func newS3(t testing.TB) (*store.S3, string) {
	t.Helper()
	ctx := context.Background()
	cfg := testkit.NewS3Store(t)
	s, err := store.NewS3(ctx, store.Options(cfg))
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	if err := s.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return s, bucketOf(t, cfg)
}

// TestPutBatch: MinIO stores each object of a batch under its own key, below the store's
// prefix, with exactly its bytes, and nothing else (no archive object is left behind).
func TestPutBatch(t *testing.T) {
	ctx := context.Background()
	s, bucket := newS3(t)
	objs := []store.Object{
		{Key: "objects/ab/one.json", Body: []byte(`{"id":1}`)},
		{Key: "objects/cd/two.json", Body: []byte(`[]`)},
		{Key: "snapshots/x.json", Body: []byte("")},
	}
	if err := s.PutBatch(ctx, objs); err != nil {
		t.Fatalf("PutBatch: %v", err)
	}
	// A second batch goes through the path that no longer checks.
	if err := s.PutBatch(ctx, []store.Object{{Key: "objects/ef/three.json", Body: []byte(`"3"`)}}); err != nil {
		t.Fatalf("second PutBatch: %v", err)
	}
	want := map[string]string{
		"objects/ab/one.json":   `{"id":1}`,
		"objects/cd/two.json":   `[]`,
		"snapshots/x.json":      "",
		"objects/ef/three.json": `"3"`,
	}
	got := map[string]string{}
	for k := range want {
		b, err := s.Get(ctx, k)
		if err != nil {
			t.Fatalf("Get(%q): %v", k, err)
		}
		got[k] = string(b)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects mismatch (-want +got):\n%s", diff)
	}
	raw := rawClient(t, ctx, testkit.NewS3Store(t))
	out, err := raw.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list bucket: %v", err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	wantKeys := []string{"catalogue/objects/ab/one.json", "catalogue/objects/cd/two.json", "catalogue/objects/ef/three.json", "catalogue/snapshots/x.json"}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("bucket keys mismatch (-want +got):\n%s", diff)
	}
}

// TestPutBatchBadKey: a batch with one invalid key is refused before anything is sent.
func TestPutBatchBadKey(t *testing.T) {
	ctx := context.Background()
	s, _ := newS3(t)
	err := s.PutBatch(ctx, []store.Object{{Key: "objects/ok.json", Body: []byte("1")}, {Key: "../escape.json", Body: []byte("2")}})
	if err == nil {
		t.Fatal("PutBatch with key ../escape.json succeeded; want an error")
	}
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(keys) != 0 {
		t.Errorf("after a refused batch the store holds %q; want nothing", keys)
	}
}

// TestPutBatchLongPrefix: entry names longer than the 100 bytes of a classic tar header
// (a deep prefix) are extracted under their full names.
func TestPutBatchLongPrefix(t *testing.T) {
	ctx := context.Background()
	cfg := testkit.NewS3Store(t)
	cfg.URL += "/" + strings.Repeat("deep-folder/", 12) // 144 more bytes
	s, err := store.NewS3(ctx, store.Options(cfg))
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	if err := s.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	key := "objects/ab/" + strings.Repeat("0123456789abcdef", 4) + ".json"
	if err := s.PutBatch(ctx, []store.Object{{Key: key, Body: []byte(`{"deep":true}`)}}); err != nil {
		t.Fatalf("PutBatch: %v", err)
	}
	got, err := s.Get(ctx, key)
	if err != nil || string(got) != `{"deep":true}` {
		t.Errorf("Get(%q) = %q, %v; want the stored body", key, got, err)
	}
	if keys, err := s.List(ctx, ""); err != nil || !cmp.Equal(keys, []string{key}) {
		t.Errorf("List = %q, %v; want only %q", keys, err, key)
	}
}
