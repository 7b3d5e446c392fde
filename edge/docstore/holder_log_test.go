package docstore

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

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
