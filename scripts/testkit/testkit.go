// Package testkit gives tests real services: a fresh PostgreSQL database per test with
// the reference schema applied, the same database on the streaming standby, fresh stores (a
// local folder and a MinIO bucket), and the schemas the contract tests run against.
//
// It lives under scripts/, beside the servers it talks to (scripts/testkit/services), and not
// in builder/: the builder's tests, the edge's and the commands' all use it, and an edge test
// importing builder/buildertest pointed back into the other half. Only tests import it; it
// imports what a migrated database needs (templates, builder/webhook/queue, and
// builder/freshness for the standby's replay position).
//
// The services are started by scripts/test.sh (make test) or make services and found through:
//
//	CATALOGUE_TEST_PG_URL         admin URL of a PostgreSQL server
//	CATALOGUE_TEST_STANDBY_URL    admin URL of a streaming standby of that server
//	CATALOGUE_TEST_S3_ENDPOINT    MinIO endpoint; credentials in AWS_ACCESS_KEY_ID/SECRET
//	CATALOGUE_TEST_REQUIRE=1      a missing service fails the test instead of skipping it
//
// A bare `go test` without services skips the tests that need them; `make test` never does.
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit/services"
	"github.com/trainingco/catalogue/templates"
)

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Connect opens a connection to dbURL for the rest of the test, failing the test if it is
// not open within 30 s.
func Connect(t testing.TB, dbURL string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// NewDatabase creates an empty database for this test and returns its URL; it is dropped
// when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := services.Need(t, "CATALOGUE_TEST_PG_URL")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to test PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	name := randomName("cat_")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, admin); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse CATALOGUE_TEST_PG_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// NewMigratedDatabase is NewDatabase migrated as builder migrate does by default: the
// reference schema, the change-capture triggers, and the webhook and River tables.
func NewMigratedDatabase(t testing.TB) string {
	t.Helper()
	dbURL := NewDatabase(t)
	Exec(t, dbURL, templates.MustDefault().Migration(true))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := queue.Migrate(ctx, dbURL); err != nil {
		t.Fatalf("migrate the webhook tables: %v", err)
	}
	return dbURL
}

// NewReplicatedDatabase is NewMigratedDatabase on the primary, with the URL of the same
// database on the streaming standby (CATALOGUE_TEST_STANDBY_URL): a real read replica, which
// has replayed the database's creation when it returns.
func NewReplicatedDatabase(t testing.TB) (primary, standby string) {
	t.Helper()
	services.Need(t, "CATALOGUE_TEST_STANDBY_URL")
	return replicated(t, NewMigratedDatabase(t))
}

// NewReplicatedEmptyDatabase is NewReplicatedDatabase without the migration, for a test
// that creates a provider's own tables first.
func NewReplicatedEmptyDatabase(t testing.TB) (primary, standby string) {
	t.Helper()
	services.Need(t, "CATALOGUE_TEST_STANDBY_URL")
	return replicated(t, NewDatabase(t))
}

// replicated returns primary with the URL of the same database on the standby, once it
// has replayed its creation.
func replicated(t testing.TB, primary string) (string, string) {
	t.Helper()
	admin := services.Need(t, "CATALOGUE_TEST_STANDBY_URL")
	p, err := url.Parse(primary)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse CATALOGUE_TEST_STANDBY_URL: %v", err)
	}
	u.Path = p.Path
	standby := u.String()
	WaitReplayed(t, primary, standby)
	return primary, standby
}

// WaitReplayed waits, at most a minute, until the standby has replayed everything the
// primary has written so far.
func WaitReplayed(t testing.TB, primary, standby string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var lsn string
	if err := queryRow(ctx, primary, "SELECT pg_current_wal_insert_lsn()::text", &lsn); err != nil {
		t.Fatalf("read the primary's WAL position: %v", err)
	}
	if l, err := freshness.ParseLSN(lsn); err == nil {
		lsn = l.RecordEnd().String() // see RecordEnd: the position past a page header is never replayed alone
	}
	for {
		var done bool
		err := queryRow(ctx, standby, "SELECT COALESCE(pg_last_wal_replay_lsn() >= '"+lsn+"'::pg_lsn, FALSE)", &done)
		if err == nil && done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the standby has not replayed %s within a minute (last error: %v)", lsn, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func queryRow(ctx context.Context, dbURL, sql string, dest any) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest)
}

// Exec runs sql (one or several statements, no arguments) against dbURL.
func Exec(t testing.TB, dbURL, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("exec: %v\n%s", err, sql)
	}
}

// NewLocalStore returns the configuration of a fresh local-folder store.
func NewLocalStore(t testing.TB) config.Store {
	return config.Store{URL: "file://" + t.TempDir() + "/catalogue", Region: "us-east-1"}
}

// NewS3Store returns the configuration of a fresh bucket on the test MinIO. The bucket does
// not exist yet: creating it is part of what the code under test must do.
func NewS3Store(t testing.TB) config.Store {
	t.Helper()
	endpoint := services.Need(t, "CATALOGUE_TEST_S3_ENDPOINT")
	bucket := strings.ReplaceAll(randomName("cat-"), "_", "-")
	return config.Store{URL: fmt.Sprintf("s3://%s/catalogue", bucket), Endpoint: endpoint, Region: "us-east-1"}
}

// Stores returns one fresh store of each kind, named for subtests.
func Stores(t testing.TB) map[string]config.Store {
	return map[string]config.Store{"local": NewLocalStore(t), "s3": NewS3Store(t)}
}
