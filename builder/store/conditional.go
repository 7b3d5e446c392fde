package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// ErrNotModified is returned by GetIfChanged when the object still has the version the
// caller holds.
var ErrNotModified = errors.New("object not modified")

// GetIfChanged is GetMax of an object that is returned only when its version differs from
// tag, which a previous GetIfChanged returned ("" matches no version); otherwise it returns
// an error wrapping ErrNotModified. It returns the object's version with its bytes. An
// edge asks for the pointer this way every second: S3 answers an unchanged one with a
// bodiless 304, and bills it as one GET.
func (s *S3) GetIfChanged(ctx context.Context, key, tag string, limit int64) ([]byte, string, error) {
	return s.get(ctx, key, tag, limit)
}

// isNotModified reports whether err is S3's answer 304 to a conditional GET.
func isNotModified(err error) bool {
	var resp *awshttp.ResponseError
	return errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotModified
}

// GetIfChanged is S3's for a folder. A file's version is a hash of its content: reading a
// small file costs less than a stat whose time may be too coarse to tell two writes apart.
func (l *Local) GetIfChanged(ctx context.Context, key, tag string, limit int64) ([]byte, string, error) {
	b, err := l.GetMax(ctx, key, limit)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	version := `"` + hex.EncodeToString(sum[:16]) + `"`
	if version == tag {
		return nil, tag, fmt.Errorf("get %s: %w", key, ErrNotModified)
	}
	return b, version, nil
}
