package edge

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/docstore"
	"github.com/trainingco/catalogue/edge/telemetry"
)

// dayWatch compares the day the served snapshot was rendered for with the edge's own
// "today" (D1). When builds fail, or the publish guard refuses them, past midnight, the
// static documents' upcoming_class and can_register describe an earlier day while the live
// search uses today: nothing a client sees says so. dayWatch exports both days and warns,
// once per snapshot and day.
type dayWatch struct {
	metrics *telemetry.Metrics
	log     *slog.Logger
	now     func() time.Time
	loc     *time.Location

	mu         sync.Mutex
	warned     string // the snapshot and day last warned about
	warnedZone string // the snapshot last warned about for its time zone
}

// dayCheckEvery is how often the edge looks again, for the day that turns under a snapshot
// that stays.
const dayCheckEvery = time.Minute

// run checks the snapshot current returns every dayCheckEvery until ctx is done.
func (w *dayWatch) run(ctx context.Context, current func() *docstore.Snapshot) {
	t := time.NewTicker(dayCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.check(current())
		}
	}
}

// check compares snap's day with today, records both, and warns when snap is behind or was
// built for another time zone.
func (w *dayWatch) check(snap *docstore.Snapshot) {
	if snap == nil {
		return
	}
	w.checkZone(snap)
	day, err := time.Parse(time.DateOnly, snap.Today())
	if err != nil {
		return // a manifest that does not say: nothing to compare
	}
	today := config.Today(w.now(), w.loc)
	behind := int(today.Sub(day).Hours() / 24)
	w.metrics.SnapshotDay(day, behind)
	if behind <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := snap.ID() + " " + today.Format(time.DateOnly)
	if w.warned == key {
		return
	}
	w.warned = key
	w.log.Warn("the snapshot being served was built for an earlier day: its upcoming_class and can_register describe that day, while the search uses today; builds are failing or refused (see builder status and the builder's log)",
		"snapshot", snap.ID(), "snapshot_day", snap.Today(), "today", today.Format(time.DateOnly), "days_behind", behind)
}

// checkZone warns, once per snapshot, when snap was built for another time zone than the
// edge's: builder and edge must agree on timezone (D1), or the static documents'
// upcoming_class and can_register follow the builder's "today" while the search follows the
// edge's, for as many hours a day as the zones are apart.
func (w *dayWatch) checkZone(snap *docstore.Snapshot) {
	zone := snap.Timezone()
	if zone == "" || zone == w.loc.String() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warnedZone == snap.ID() {
		return
	}
	w.warnedZone = snap.ID()
	w.log.Warn("the snapshot being served was built for another time zone than this edge's: its upcoming_class and can_register follow the builder's today, the search this edge's; set timezone to the same zone for both (D1)",
		"snapshot", snap.ID(), "snapshot_timezone", zone, "timezone", w.loc.String())
}
