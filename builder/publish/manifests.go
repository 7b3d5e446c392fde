package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// manifestIDs returns the ids of every manifest in the store, oldest first: snapshot ids
// sort in build order (snapshot.NewID).
func (p *Publisher) manifestIDs(ctx context.Context) ([]string, error) {
	keys, err := p.Store.List(ctx, snapshot.ManifestPrefix)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var ids []string
	for _, k := range keys {
		if id := snapshot.IDFromManifestKey(k); id != "" && !strings.Contains(id, "/") {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// partition splits ids (oldest first) into the snapshots kept, newest first, and those to
// drop. The newest keep are kept, and so is current whatever its age: after a rollback the
// current snapshot may be older than all of them.
func partition(ids []string, keep int, current string) (kept, dropped []string) {
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if len(kept) < keep || id == current {
			kept = append(kept, id)
		} else {
			dropped = append(dropped, id)
		}
	}
	return kept, dropped
}

// header is a manifest without its documents; decoding only it skips building the map.
type header struct {
	ID       string          `json:"snapshot"`
	BuiltAt  time.Time       `json:"built_at"`
	Today    string          `json:"today"`
	Timezone string          `json:"timezone"`
	Counts   snapshot.Counts `json:"counts"`
}

// readHeaders returns the headers of the manifests ids, in the same order.
func (p *Publisher) readHeaders(ctx context.Context, ids []string) ([]header, error) {
	hs := make([]header, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, id := range ids {
		g.Go(func() error {
			b, err := p.Store.Get(gctx, snapshot.ManifestKey(id))
			if err != nil {
				return fmt.Errorf("read manifest %s: %w", id, err)
			}
			if err := json.Unmarshal(b, &hs[i]); err != nil {
				return fmt.Errorf("read manifest %s: %w", id, err)
			}
			if hs[i].ID != id {
				return fmt.Errorf("read manifest %s: it names snapshot %q", id, hs[i].ID)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return hs, nil
}
