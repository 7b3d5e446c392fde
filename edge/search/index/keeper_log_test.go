package index

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestKeeperLogsItsErrorAsError: the warning of a failed load names its error "error", the
// field every other line uses; it was "err" (an operator's review), which a search on
// error= in the logs missed.
func TestKeeperLogsItsErrorAsError(t *testing.T) {
	var log bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	k := NewKeeper(func(context.Context) (*Index, error) { return nil, errors.New("replica down") },
		slog.New(slog.NewJSONHandler(&log, nil)))
	k.Start(ctx, 5*time.Second)
	cancel()
	if got := log.String(); !strings.Contains(got, `"error":"replica down"`) || strings.Contains(got, `"err":`) {
		t.Errorf("a failed load logged %s; want its error in the field error", got)
	}
}
