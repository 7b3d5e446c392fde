package faults

import (
	"fmt"
	"os"
	"testing"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/scripts/testkit/services"
)

// minio is a MinIO of one test's own, which the test can stop and kill (URL:
// http://127.0.0.1:PORT).
type minio struct{ *services.TestServer }

// startMinIO starts a dedicated MinIO and stops it when the test ends. It needs the test
// services to be there (the MinIO binary comes with them), so it skips or fails like
// testkit when CATALOGUE_TEST_S3_ENDPOINT is unset. Its credentials are those of the
// test MinIO, which the binaries and the test's own clients already use.
func startMinIO(t testing.TB) *minio {
	t.Helper()
	testkit.NewS3Store(t) // only for its check that MinIO is available
	return &minio{services.ForTest(t, "CATALOGUE_TEST_S3_ENDPOINT", func(dir string) (*services.Server, error) {
		return services.MinIO(dir, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
	})}
}

// store returns the configuration of a bucket on this MinIO.
func (m *minio) store(bucket string) config.Store {
	return config.Store{URL: fmt.Sprintf("s3://%s/catalogue", bucket), Endpoint: m.URL, Region: "us-east-1"}
}
