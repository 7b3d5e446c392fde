package builder

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/catalogue"
	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/templates"
)

// buildChanges builds b's changes over the last publication: it reads only the rows the
// changes can affect, renders only the documents those rows appear in (with the course
// lists and popular, from the state kept since the last build), and publishes them with
// every other document taken from the last manifest. Everything the changes name is read in
// one transaction, as a full build reads everything.
func (s *serveLoop) buildChanges(ctx context.Context, tpl *templates.Set, p *publish.Publisher, b freshness.Batch, today time.Time) (publish.Result, *catalogue.State, error) {
	var affected *catalogue.Affected
	err := readTx(ctx, s.cfg.ReplicaURL(), func(tx pgx.Tx) (err error) {
		affected, err = catalogue.ReadChanges(ctx, tx, tpl, &b.Changes, today)
		return err
	})
	if err != nil {
		return publish.Result{}, nil, err
	}
	partial, err := s.last.state.RenderChanges(affected)
	if err != nil {
		return publish.Result{}, nil, fmt.Errorf("render: %w", err)
	}
	cur := s.last.manifest
	meta := publish.Meta{
		Today: today.Format(time.DateOnly), Timezone: s.cfg.Timezone,
		Counts: countsAfter(cur, partial), Build: s.record(b, false),
	}
	res, err := p.PublishChanges(ctx, cur, partial.Docs, partial.Removed, meta, false)
	return res, partial.State, err
}

// countsAfter counts the courses and classes of cur once partial is applied to it.
func countsAfter(cur *snapshot.Manifest, partial *catalogue.Partial) snapshot.Counts {
	classes := cur.Counts.Classes
	for r := range partial.Docs {
		if _, ok := cur.Documents[r]; !ok && snapshot.IsClassRoute(r) {
			classes++
		}
	}
	for _, r := range partial.Removed {
		if _, ok := cur.Documents[r]; ok && snapshot.IsClassRoute(r) {
			classes--
		}
	}
	return snapshot.Counts{Courses: partial.State.Courses(), Classes: classes}
}
