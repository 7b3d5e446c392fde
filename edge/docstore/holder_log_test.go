package docstore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestNothingPublishedSaysWhere: an edge that finds no snapshot says where it looked, so
// that one pointed at the wrong place (a store.url whose prefix the builder does not
// publish to) is told from one waiting for the first build. It logged only "no snapshot
// has been published yet".
func TestNothingPublishedSaysWhere(t *testing.T) {
	cfg := testkit.NewLocalStore(t)
	st, err := store.Open(context.Background(), store.Options(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h := New(Options{Store: st, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err := h.Refresh(context.Background()); err == nil {
		t.Fatal("Refresh of an empty store: no error")
	}
	for _, want := range []string{"store=" + cfg.URL, "if one was published, store.url names another place"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log %q, want it to hold %q", log.String(), want)
		}
	}
}

// TestLastingStoreErrorLoggedOnce: a store error that lasts is logged once, however its
// text varies between attempts: S3's errors name each request (RequestID, HostID), and an
// edge on a missing bucket logged a warning at every poll, every second.
func TestLastingStoreErrorLoggedOnce(t *testing.T) {
	h, log := onMissingBucket(t)
	for range 3 {
		if err := h.Refresh(context.Background()); err == nil {
			t.Fatal("Refresh from a missing bucket: no error")
		}
	}
	if n := strings.Count(log.String(), "snapshot refresh failed"); n != 1 {
		t.Errorf("3 failed refreshes logged %d warnings, want 1:\n%s", n, log.String())
	}
}

// TestErrKeyDropsWhatVaries: two failures alike but for the request's ids or the local end
// of their connection are one failure to log; different failures are not.
func TestErrKeyDropsWhatVaries(t *testing.T) {
	same := [][2]string{
		{"GetObject, https response error StatusCode: 403, RequestID: 18EBE27D838FF691, HostID: 23ad5c, api error AccessDenied",
			"GetObject, https response error StatusCode: 403, RequestID: 18EBE27D909D3A8D, HostID: 77ff01, api error AccessDenied"},
		{"read tcp 127.0.0.1:51514->127.0.0.1:9000: read: connection reset by peer",
			"read tcp 127.0.0.1:40122->127.0.0.1:9000: read: connection reset by peer"},
		{"read tcp [::1]:51514->[::1]:9000: i/o timeout", "read tcp [::1]:40122->[::1]:9000: i/o timeout"},
	}
	for _, p := range same {
		if a, b := errKey(errors.New(p[0])), errKey(errors.New(p[1])); a != b {
			t.Errorf("errKey(%q) = %q, errKey(%q) = %q; want them equal", p[0], a, p[1], b)
		}
	}
	if a, b := errKey(errors.New("StatusCode: 403, RequestID: 1, api error AccessDenied")), errKey(errors.New("StatusCode: 404, RequestID: 1, api error NoSuchBucket")); a == b {
		t.Errorf("a 403 and a 404 share the key %q", a)
	}
}

// TestRefreshFailureSaysWhatIsServed: a failed refresh says what the edge serves. One
// started while the store fails serves nothing (it logged "the snapshot being served
// stays", serving ""), and one whose edge.cache_dir cannot be written serves the snapshot
// it loaded (it logged the same "refresh failed" though the refresh had succeeded).
func TestRefreshFailureSaysWhatIsServed(t *testing.T) {
	h, log := onMissingBucket(t)
	if err := h.Refresh(context.Background()); err == nil {
		t.Fatal("Refresh from a missing bucket: no error")
	}
	if got := log.String(); !strings.Contains(got, "nothing is served: not ready until the store answers") || strings.Contains(got, "being served stays") {
		t.Errorf("failed first refresh logged %q; want it to say nothing is served", got)
	}

	local := store.NewLocal(t.TempDir()).Unsynced()
	publish(t, local, "cached-0", "", catalogue{snapshot.RouteCourses: `{"courses":0}`}, nil)
	log.Reset()
	blocked := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h = New(Options{Store: local, CacheDir: filepath.Join(blocked, "cache"), PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(log, nil))})
	_ = h.Refresh(context.Background())
	if h.Current() == nil || h.Current().id != "cached-0" {
		t.Fatalf("the snapshot is not served despite a cache that cannot be written: %v", h.Current())
	}
	if got := log.String(); !strings.Contains(got, "snapshot cached-0 served, but not saved to edge.cache_dir") || strings.Contains(got, "refresh failed") {
		t.Errorf("a cache that cannot be written logged %q; want it to say the snapshot is served but not saved", got)
	}
}

// onMissingBucket is a holder on an S3 store whose bucket is never created, and its log.
func onMissingBucket(t *testing.T) (*Holder, *bytes.Buffer) {
	st, err := store.Open(context.Background(), store.Options(testkit.NewS3Store(t)))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	return New(Options{Store: st, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(&log, nil))}), &log
}
