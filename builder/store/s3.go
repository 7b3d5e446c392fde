package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// maxIdleConnsPerHost is how many idle connections the client keeps open to the endpoint.
// The builder uploads with about 64 requests in flight; the SDK's default of 10 would close
// and reopen connections (and TLS sessions) all the time, so keep room for twice that.
const maxIdleConnsPerHost = 256

// requestTimeout bounds one request attempt, response body included. Without it a store
// that accepts connections and never answers would hang a build for ever, and with it every
// later scheduled build of builder serve, which skips a run while one is going. The largest
// requests (a batch of 8 MiB, a manifest of ~10 MB at 100,000 classes) take seconds even on
// a slow link; the SDK retries an attempt that timed out.
const requestTimeout = 2 * time.Minute

// deleteBatch is the most keys one DeleteObjects request may name (an S3 limit).
const deleteBatch = 1000

// S3 is a Store in a bucket of Amazon S3 or any S3-compatible service such as MinIO. Every
// key is stored under the prefix of the store's URL.
type S3 struct {
	client   *s3.Client
	bucket   string
	prefix   string // without a trailing slash; empty for the bucket's root
	endpoint string // for String; empty means AWS
	region   string
	batch    batchMode // s3batch.go
}

var _ Store = (*S3)(nil)

// NewS3 returns the store that cfg names: cfg.URL is s3://BUCKET/PREFIX, cfg.Endpoint an
// optional S3-compatible endpoint, cfg.Region the region. Credentials come from the SDK's
// standard chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, shared files, instance roles).
// The client is built once and is safe for concurrent use.
func NewS3(ctx context.Context, cfg Options) (*S3, error) {
	return newS3(ctx, cfg, requestTimeout)
}

// newS3 is NewS3 with each request attempt bounded by timeout.
func newS3(ctx context.Context, cfg Options, timeout time.Duration) (*S3, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("store.url: must be s3://BUCKET/PREFIX (got %q)", cfg.URL)
	}
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(newHTTPClient(timeout)),
		awsconfig.WithRetryer(newRetryer),
	}
	if cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.Region))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint == "" {
			return
		}
		o.BaseEndpoint = aws.String(cfg.Endpoint)
		// MinIO (and most S3-compatible servers on a plain host:port) cannot serve
		// virtual-hosted bucket names (bucket.127.0.0.1:9000), so address buckets by path.
		o.UsePathStyle = true
		// Since early 2025 the SDK adds CRC checksums to every upload and asks for them on
		// every download. Older MinIO, Ceph and several other S3-compatible services reject
		// or mishandle them, so only send checksums where the operation requires one
		// (DeleteObjects); AWS itself keeps the SDK's default.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3{
		client:   client,
		bucket:   u.Host,
		prefix:   strings.Trim(u.Path, "/"),
		endpoint: redactEndpoint(cfg.Endpoint),
		region:   awsCfg.Region,
	}, nil
}

// newHTTPClient returns the SDK's HTTP client with enough idle connections per host for
// the builder's concurrent uploads, each request attempt bounded by timeout.
func newHTTPClient(timeout time.Duration) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTimeout(timeout).WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = maxIdleConnsPerHost
		tr.MaxIdleConnsPerHost = maxIdleConnsPerHost
	})
}

// newRetryer is the SDK's standard retryer without its client-side retry quota: with 64
// uploads in flight, a short burst of throttling or resets would drain the quota and fail
// every later request at once with "retry quota exceeded" instead of retrying it.
func newRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.RateLimiter = ratelimit.None
	})
}

// redactEndpoint drops any user information from the endpoint so String never shows it.
func redactEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.User == nil {
		return endpoint
	}
	u.User = nil
	return u.String()
}

// String describes the store: its URL and where it is, never credentials.
func (s *S3) String() string {
	desc := "s3://" + s.bucket
	if s.prefix != "" {
		desc += "/" + s.prefix
	}
	if s.endpoint != "" {
		return desc + " (endpoint " + s.endpoint + ")"
	}
	return desc + " (region " + s.region + ")"
}

// objectKey returns the S3 key under the store's prefix.
func (s *S3) objectKey(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

// Get returns the whole object, or an error wrapping ErrNotFound.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetMax(ctx, key, -1)
}

// GetMax reads the object, refusing one larger than limit (limit < 0: no limit) from its
// Content-Length when that says so, and otherwise after limit+1 bytes. Content-Length is
// trusted for at most trustedLength bytes of buffer: a store, proxy or CDN that announces
// more must deliver it before it is allocated.
func (s *S3) GetMax(ctx context.Context, key string, limit int64) ([]byte, error) {
	b, _, err := s.get(ctx, key, "", limit)
	return b, err
}

// get is GetMax that also returns the object's ETag and, given one in ifNoneMatch, answers
// an error wrapping ErrNotModified when the object still has it.
func (s *S3) get(ctx context.Context, key, ifNoneMatch string, limit int64) ([]byte, string, error) {
	if err := validKey(key); err != nil {
		return nil, "", err
	}
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.objectKey(key))}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(ifNoneMatch)
	}
	out, err := s.client.GetObject(ctx, in)
	switch {
	case isNoSuchKey(err):
		return nil, "", fmt.Errorf("get %s: %w", key, ErrNotFound)
	case isNotModified(err):
		return nil, ifNoneMatch, fmt.Errorf("get %s: %w", key, ErrNotModified)
	case err != nil:
		return nil, "", fmt.Errorf("get %s: %w", key, err)
	}
	defer out.Body.Close()
	length := aws.ToInt64(out.ContentLength)
	if limit >= 0 && length > limit {
		return nil, "", fmt.Errorf("get %s: %d bytes, at most %d allowed: %w", key, length, limit, ErrTooLarge)
	}
	b, err := readMax(out.Body, key, min(max(length, 0), trustedLength), limit)
	return b, aws.ToString(out.ETag), err
}

// Put uploads the whole object in one request, which S3 applies atomically.
func (s *S3) Put(ctx context.Context, key string, body []byte) error {
	if err := validKey(key); err != nil {
		return err
	}
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.objectKey(key)),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
	}
	// The store can sit behind a CDN or be read directly; say what the documents are.
	if strings.HasSuffix(key, ".json") {
		in.ContentType = aws.String("application/json")
	}
	if _, err := s.client.PutObject(ctx, in); err != nil {
		return fmt.Errorf("upload %s: %w", key, err)
	}
	return nil
}

// Delete removes the objects with DeleteObjects, at most 1000 keys per request. S3 reports
// a key that does not exist as deleted; a failure of one object comes back in the response
// body, not as an error of the request, so each is checked.
func (s *S3) Delete(ctx context.Context, keys ...string) error {
	for _, key := range keys {
		if err := validKey(key); err != nil {
			return err
		}
	}
	for batch := range slices.Chunk(keys, deleteBatch) {
		if err := s.deleteBatch(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

func (s *S3) deleteBatch(ctx context.Context, keys []string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, key := range keys {
		ids[i] = types.ObjectIdentifier{Key: aws.String(s.objectKey(key))}
	}
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: aws.String(s.bucket),
		// Quiet: the response lists only the failures.
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("delete %d objects: %w", len(keys), err)
	}
	var errs []error
	for _, e := range out.Errors {
		// Some S3-compatible services report a missing key instead of treating it as deleted.
		if aws.ToString(e.Code) == "NoSuchKey" {
			continue
		}
		errs = append(errs, fmt.Errorf("delete %s: %s: %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message)))
	}
	return errors.Join(errs...)
}

// List returns every key that starts with prefix, sorted, without the store's prefix.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	keys := []string{}
	if !canMatch(prefix) {
		return keys, nil // MinIO refuses such prefixes ("../") outright
	}
	base := s.objectKey("")
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(base + prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		for _, obj := range page.Contents {
			keys = append(keys, strings.TrimPrefix(aws.ToString(obj.Key), base))
		}
	}
	// S3 already lists in byte order; sorting keeps the promise for any compatible service.
	slices.Sort(keys)
	return keys, nil
}

// Ensure creates the bucket when it does not exist yet. The prefix needs nothing: S3 has
// no folders.
func (s *S3) Ensure(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)})
	if err == nil {
		return nil
	}
	if !isNotFound(err) {
		return fmt.Errorf("check bucket %s: %w", s.bucket, err)
	}
	in := &s3.CreateBucketInput{Bucket: aws.String(s.bucket)}
	// AWS refuses a location constraint of us-east-1 (its default) and requires one for
	// every other region.
	if s.region != "" && s.region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(s.region),
		}
	}
	_, err = s.client.CreateBucket(ctx, in)
	// Another builder may have created it between our HeadBucket and CreateBucket.
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("create bucket %s: %w", s.bucket, err)
	}
	return nil
}

// isNoSuchKey reports whether err says that the object does not exist. A missing bucket is
// not one: it means the store is not set up, which callers must not take for "no object".
func isNoSuchKey(err error) bool {
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "NoSuchBucket" {
		return false
	}
	return isNotFound(err)
}

// isNotFound reports whether err is an HTTP 404 (HEAD responses carry no error code).
func isNotFound(err error) bool {
	var nf *types.NotFound
	if errors.As(err, &nf) {
		return true
	}
	var resp *awshttp.ResponseError
	return errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound
}
