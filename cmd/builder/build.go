package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/term"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/builder/publish"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/cmd/internal/logging"
	"github.com/trainingco/catalogue/cmd/internal/metricsserve"
)

// cmdRun builds and publishes one snapshot. Whatever happens it prints one summary line on
// stdout when a snapshot was published, in a shape scripts parse:
//
//	snapshot <id>: <N> documents, <M> new objects stored, <B> bytes, <S>s
func cmdRun(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "run", buildKeys...)
	force := fs.Bool("force", false, "publish even when the catalogue shrank more than builder.max_shrink allows")
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	opts := builder.RunOptions{
		Force:   *force,
		Logger:  logging.New(e.stderr),
		Waiting: func() { fmt.Fprintln(e.stderr, "waiting for another builder…") },
	}
	opts.Logger.Info("configuration", "config", cfg) // one field per key, secrets redacted (config.LogValue)
	var bar *progressBar
	if isTerminal(e.stderr) {
		bar = newProgressBar(e.stderr)
		opts.Progress = bar.update
	}
	res, err := builder.Run(ctx, cfg, opts)
	bar.finish()
	if res.SnapshotID != "" {
		fmt.Fprintf(e.stdout, "snapshot %s: %d documents, %d new objects stored, %d bytes, %.2fs\n",
			res.SnapshotID, res.Documents, res.ObjectsStored, res.BytesStored, res.Duration.Seconds())
	}
	if errors.Is(err, publish.ErrCollect) {
		// Published: a failed collection is retried by the next run, so it is no failure.
		fmt.Fprintln(e.stderr, "builder: warning:", err)
		return nil
	}
	if err != nil && res.SnapshotID == "" {
		return fmt.Errorf("run: %w; nothing was published", err)
	}
	if err != nil {
		return fmt.Errorf("run: %w", err) // published, but its webhooks could not be queued
	}
	return nil
}

// serveKeys are the keys of builder serve: a build's, the schedule and freshness.
var serveKeys = append(slices.Clone(buildKeys), "builder.schedule", "builder.listen", "builder.debounce",
	"builder.max_delay", "builder.replica_wait", "builder.metrics_listen")

// cmdServe builds at start, on the schedule and after every committed change until SIGINT
// or SIGTERM, logging JSON lines, and answers /metrics on builder.metrics_listen.
func cmdServe(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "serve", serveKeys...)
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	log := logging.New(e.stderr)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts := builder.ServeOptions{Logger: log, Metrics: builder.NewMetrics(reg)}
	if cfg.Builder.MetricsListen != "" {
		stop, err := metricsserve.Serve("builder.metrics_listen", cfg.Builder.MetricsListen,
			builder.MetricsHandler(reg, log), log)
		if err != nil {
			return err
		}
		defer stop()
	}
	return builder.Serve(ctx, cfg, opts)
}

// cmdStatus prints the current snapshot and the kept ones.
func cmdStatus(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "status", storeKeys...)
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	st, err := builder.Status(ctx, cfg)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	printStatus(e, cfg.Store.URL, st, time.Now())
	return nil
}

func printStatus(e *env, storeURL string, st publish.Status, now time.Time) {
	fmt.Fprintf(e.stdout, "store: %s\n", storeURL)
	if st.Current == nil {
		fmt.Fprintln(e.stdout, "current: none (no snapshot has been published yet)")
		return
	}
	c := st.Current
	fmt.Fprintf(e.stdout, "current: %s\n", c.ID)
	fmt.Fprintf(e.stdout, "  built at:     %s (%s ago)\n", c.BuiltAt.Format(time.RFC3339), now.Sub(c.BuiltAt).Round(time.Second))
	fmt.Fprintf(e.stdout, "  published at: %s\n", st.PublishedAt.Format(time.RFC3339))
	fmt.Fprintf(e.stdout, "  today:        %s (%s)\n", c.Today, c.Timezone)
	fmt.Fprintf(e.stdout, "  documents:    %d (%d courses, %d classes), %d bytes\n", c.Counts.Documents, c.Counts.Courses, c.Counts.Classes, st.Bytes)
	if c.Build != nil {
		fmt.Fprintf(e.stdout, "  build:        %s\n", describeBuild(c.Build))
	}
	fmt.Fprintf(e.stdout, "kept snapshots, newest first (%d):\n", len(st.Kept))
	for _, s := range st.Kept {
		mark := " "
		if s.Current {
			mark = "*"
		}
		fmt.Fprintf(e.stdout, "%s %s  built %s  %d documents, %d courses, %d classes\n",
			mark, s.ID, s.BuiltAt.Format(time.RFC3339), s.Counts.Documents, s.Counts.Courses, s.Counts.Classes)
	}
	printLastChange(e, st.LastChange)
}

// describeBuild says in one line how a snapshot was built.
func describeBuild(b *snapshot.Build) string {
	how := "full"
	switch {
	case b.Incremental:
		how = "only what changed, over " + b.Base
	case b.Restores != "":
		how = "the documents of " + b.Restores + " again"
	}
	return fmt.Sprintf("%s (%s): %d documents rendered, %d changed, %d removed", b.Trigger, how, b.Rendered, b.Changed, b.Removed)
}

// printLastChange shows the newest kept build made for committed changes and what it
// re-rendered.
func printLastChange(e *env, s *publish.Snapshot) {
	if s == nil {
		fmt.Fprintln(e.stdout, "last change-triggered build: none kept")
		return
	}
	b := s.Build
	fmt.Fprintf(e.stdout, "last change-triggered build: %s\n", s.ID)
	fmt.Fprintf(e.stdout, "  built at:      %s\n", s.BuiltAt.Format(time.RFC3339Nano))
	if b.NoticedAt != nil {
		fmt.Fprintf(e.stdout, "  noticed at:    %s (%s before it was built)\n", b.NoticedAt.Format(time.RFC3339Nano), s.BuiltAt.Sub(*b.NoticedAt).Round(time.Millisecond))
	}
	tables := slices.Sorted(maps.Keys(b.Notifications))
	var counts []string
	for _, t := range tables {
		counts = append(counts, fmt.Sprintf("%s %d", t, b.Notifications[t]))
	}
	fmt.Fprintf(e.stdout, "  notifications: %s\n", strings.Join(counts, ", "))
	fmt.Fprintf(e.stdout, "  build:         %s\n", describeBuild(b))
	for _, r := range b.Routes {
		fmt.Fprintf(e.stdout, "    %s\n", r)
	}
	if n := b.Changed + b.Removed - len(b.Routes); n > 0 {
		fmt.Fprintf(e.stdout, "    … and %d more\n", n)
	}
}

// cmdRollback serves the documents of a kept snapshot again, as a new snapshot.
func cmdRollback(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "rollback", append(storeKeys, "database.url")...)
	cfg, pos, err := setup(fs, cf, args, 0, 1)
	if err != nil {
		return helpIsNoError(err)
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	res, err := builder.Rollback(ctx, cfg, id, func() { fmt.Fprintln(e.stderr, "waiting for another builder…") })
	if res.SnapshotID != "" {
		fmt.Fprintln(e.stdout, describeRollback(res))
	}
	if errors.Is(err, publish.ErrCollect) {
		fmt.Fprintln(e.stderr, "builder: warning:", err) // published: the next publication collects
		return nil
	}
	if err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

// describeRollback says which snapshot a rollback made current, whose documents it serves
// and what the feeds announce of it.
func describeRollback(res publish.Result) string {
	s := fmt.Sprintf("snapshot %s is current", res.SnapshotID)
	if b := res.Manifest.Build; b != nil && b.Restores != "" {
		s += fmt.Sprintf(", serving the documents of %s: %d courses and %d classes announced in the feeds",
			b.Restores, len(res.Feed.Courses), len(res.Feed.Classes))
	}
	return s
}

// helpIsNoError turns -h, which has printed the flags, into success.
func helpIsNoError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// isTerminal says whether w is a terminal, where progress may be redrawn in place.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
