package store

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// MinIO extracts a tar archive uploaded with this metadata into one object per entry, each
// stored as a PutObject of its own would store it (the "Snowball auto-extract" of AWS
// Snowball Edge, which MinIO implements). Other S3 services store the archive as it is, so
// batches are only sent to a server that says it is MinIO, and the first batch is checked.
var snowballMetadata = map[string]string{
	"Snowball-Auto-Extract":      "true",
	"Minio-Snowball-Ignore-Dirs": "true",
}

// batchMode remembers whether the store extracts batches: undecided until the first batch,
// which asks the server what it is and checks that the batch was extracted.
type batchMode struct {
	mu       sync.Mutex
	decided  bool
	ok       bool
	metadata map[string]string // nil: snowballMetadata (tests send other metadata)
}

var _ Batcher = (*S3)(nil)

// PutBatch stores objs with one request as a tar archive that MinIO extracts. On any other
// service it returns an error wrapping ErrBatchUnsupported (see Batcher).
func (s *S3) PutBatch(ctx context.Context, objs []Object) error {
	for _, o := range objs {
		if err := validKey(o.Key); err != nil {
			return err
		}
	}
	if len(objs) == 0 {
		return nil
	}
	s.batch.mu.Lock()
	if !s.batch.decided {
		// Later batches wait for the first: until it is checked, none may be sent.
		defer s.batch.mu.Unlock()
		return s.firstBatch(ctx, objs)
	}
	ok := s.batch.ok
	s.batch.mu.Unlock()
	if !ok {
		return fmt.Errorf("store %s: %w", s, ErrBatchUnsupported)
	}
	_, err := s.putArchive(ctx, objs)
	return err
}

// firstBatch decides whether the store takes batches, storing objs either way when it does.
// It is called with s.batch.mu held.
func (s *S3) firstBatch(ctx context.Context, objs []Object) error {
	minio, err := s.isMinIO(ctx)
	if err != nil {
		return err
	}
	if !minio {
		s.batch.decided, s.batch.ok = true, false
		return fmt.Errorf("store %s: %w", s, ErrBatchUnsupported)
	}
	archive, err := s.putArchive(ctx, objs)
	if err != nil {
		return err // undecided: the next batch asks again
	}
	// A server that called itself MinIO but stored the archive as an object (a gateway, a
	// proxy in front of another service) must not be trusted with the next batch.
	_, err = s.Get(ctx, objs[0].Key)
	switch {
	case err == nil:
		s.batch.decided, s.batch.ok = true, true
		return nil
	case errors.Is(err, ErrNotFound):
		if err := s.Delete(ctx, archive); err != nil {
			return fmt.Errorf("remove unextracted batch: %w", err)
		}
		s.batch.decided, s.batch.ok = true, false
		return fmt.Errorf("store %s did not extract a batch: %w", s, ErrBatchUnsupported)
	default:
		return fmt.Errorf("check batch: %w", err)
	}
}

// isMinIO asks the bucket's server what it is, by the Server header of a HeadBucket.
func (s *S3) isMinIO(ctx context.Context) (bool, error) {
	out, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)})
	if err != nil {
		return false, fmt.Errorf("check bucket %s: %w", s.bucket, err)
	}
	resp, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response)
	return ok && strings.HasPrefix(resp.Header.Get("Server"), "MinIO"), nil
}

// putArchive uploads objs as one tar archive for extraction and returns the archive's own key
// (under which a service that does not extract would have stored it).
func (s *S3) putArchive(ctx context.Context, objs []Object) (string, error) {
	body, err := tarOf(objs, s.objectKey)
	if err != nil {
		return "", err
	}
	key := "uploads/" + randomHex(8) + ".tar"
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.objectKey(key)),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		Metadata:      s.batchMetadata(),
	})
	if err != nil {
		return "", fmt.Errorf("upload batch of %d objects (first %s): %w", len(objs), objs[0].Key, err)
	}
	return key, nil
}

// batchMetadata is the metadata that asks for extraction.
func (s *S3) batchMetadata() map[string]string {
	if s.batch.metadata != nil {
		return s.batch.metadata
	}
	return snowballMetadata
}

// tarOf writes objs into a tar archive, each entry named by its full key in the bucket.
func tarOf(objs []Object, name func(string) string) ([]byte, error) {
	size := 1024
	for _, o := range objs {
		size += 1024 + len(o.Body) // a header block, padding, and any long-name records
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	tw := tar.NewWriter(buf)
	now := time.Now()
	for _, o := range objs {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name(o.Key), Size: int64(len(o.Body)), Mode: 0o644, ModTime: now}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("archive %s: %w", o.Key, err)
		}
		if _, err := tw.Write(o.Body); err != nil {
			return nil, fmt.Errorf("archive %s: %w", o.Key, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	return buf.Bytes(), nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it panics rather)
	return hex.EncodeToString(b)
}
