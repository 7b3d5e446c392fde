package store_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// rawClient returns a plain SDK client for the test MinIO, to look at what the store wrote
// without going through it.
func rawClient(t testing.TB, ctx context.Context, cfg config.Store) *s3.Client {
	t.Helper()
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(cfg.Region))
	if err != nil {
		t.Fatalf("load AWS configuration: %v", err)
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(cfg.Endpoint)
		o.UsePathStyle = true
	})
}

func bucketOf(t testing.TB, cfg config.Store) string {
	t.Helper()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestS3NeedsEnsure: testkit hands out a bucket that does not exist; nothing works on
// it until Ensure creates it, and a missing bucket is an error, not "no such object".
func TestS3NeedsEnsure(t *testing.T) {
	cfg := newS3Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.NewS3(ctx, store.Options(cfg))
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	if err := s.Put(ctx, "current.json", []byte("{}")); err == nil {
		t.Errorf("Put before Ensure succeeded; want an error")
	}
	if _, err := s.Get(ctx, "current.json"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get before Ensure = %v; want an error that is not ErrNotFound", err)
	}
	if _, err := s.List(ctx, ""); err == nil {
		t.Errorf("List before Ensure succeeded; want an error")
	}
	if err := s.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if err := s.Put(ctx, "current.json", []byte("{}")); err != nil {
		t.Errorf("Put after Ensure: %v", err)
	}
}

// TestS3Layout checks what lands in the bucket: every key under the prefix, JSON documents
// typed as JSON, and objects beside the prefix left out of List.
func TestS3Layout(t *testing.T) {
	cfg := newS3Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.NewS3(ctx, store.Options(cfg))
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	if err := s.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	raw, bucket := rawClient(t, ctx, cfg), bucketOf(t, cfg)
	for _, key := range []string{"catalogue-old/x.json", "other/y.json"} {
		if _, err := raw.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key)}); err != nil {
			t.Fatalf("PutObject(%q): %v", key, err)
		}
	}
	for _, key := range []string{"current.json", "objects/ab/ab01.json"} {
		if err := s.Put(ctx, key, []byte("{}")); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
	}

	out, err := raw.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket})
	if err != nil {
		t.Fatalf("ListObjectsV2: %v", err)
	}
	var inBucket []string
	for _, o := range out.Contents {
		inBucket = append(inBucket, aws.ToString(o.Key))
	}
	want := []string{"catalogue-old/x.json", "catalogue/current.json", "catalogue/objects/ab/ab01.json", "other/y.json"}
	if diff := cmp.Diff(want, inBucket); diff != "" {
		t.Errorf("keys in bucket %s mismatch (-want +got):\n%s", bucket, diff)
	}

	got, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string{"current.json", "objects/ab/ab01.json"}, got); diff != "" {
		t.Errorf("List(%q) mismatch (-want +got):\n%s", "", diff)
	}

	head, err := raw.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("catalogue/current.json")})
	if err != nil {
		t.Fatalf("HeadObject: %v", err)
	}
	if diff := cmp.Diff("application/json", aws.ToString(head.ContentType)); diff != "" {
		t.Errorf("Content-Type of %q mismatch (-want +got):\n%s", "current.json", diff)
	}
}

// TestS3String: the description names the bucket, prefix and endpoint (or region) and never
// credentials, even ones written into the endpoint URL.
func TestS3String(t *testing.T) {
	tests := []struct {
		cfg  store.Options
		want string
	}{
		{store.Options{URL: "s3://bucket/catalogue", Endpoint: "http://127.0.0.1:9100", Region: "us-east-1"},
			"s3://bucket/catalogue (endpoint http://127.0.0.1:9100)"},
		{store.Options{URL: "s3://bucket/a/b/", Endpoint: "http://minio:supersecret@127.0.0.1:9100", Region: "us-east-1"},
			"s3://bucket/a/b (endpoint http://127.0.0.1:9100)"},
		{store.Options{URL: "s3://bucket/catalogue", Region: "eu-west-1"},
			"s3://bucket/catalogue (region eu-west-1)"},
	}
	for _, tt := range tests {
		s, err := store.NewS3(context.Background(), tt.cfg)
		if err != nil {
			t.Fatalf("NewS3(%+v): %v", tt.cfg, err)
		}
		if diff := cmp.Diff(tt.want, s.String()); diff != "" {
			t.Errorf("NewS3(%q).String() mismatch (-want +got):\n%s", tt.cfg.URL, diff)
		}
	}
}

// newS3Store is testkit.NewS3Store with the bucket and everything in it removed when
// the test ends, so repeated runs do not pile up buckets on a shared MinIO.
func newS3Store(t testing.TB) config.Store {
	t.Helper()
	cfg := testkit.NewS3Store(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		bucket := bucketOf(t, cfg)
		whole, err := store.NewS3(ctx, store.Options{URL: "s3://" + bucket, Endpoint: cfg.Endpoint, Region: cfg.Region})
		if err != nil {
			t.Errorf("clean up bucket %s: %v", bucket, err)
			return
		}
		keys, err := whole.List(ctx, "")
		if err != nil { // the test never created the bucket
			return
		}
		if err := whole.Delete(ctx, keys...); err != nil {
			t.Errorf("clean up bucket %s: %v", bucket, err)
			return
		}
		if _, err := rawClient(t, ctx, cfg).DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
			t.Errorf("clean up bucket %s: %v", bucket, err)
		}
	})
	return cfg
}
