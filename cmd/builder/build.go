package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/trainingco/catalogue/builder"
	"github.com/trainingco/catalogue/builder/publish"
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
		Logger:  slog.New(slog.NewTextHandler(e.stderr, nil)),
		Waiting: func() { fmt.Fprintln(e.stderr, "waiting for another builder…") },
	}
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
	if err != nil {
		return fmt.Errorf("run: %w; nothing was published", err)
	}
	return nil
}

// cmdServe builds at start and on the schedule until SIGINT or SIGTERM, logging JSON lines.
func cmdServe(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "serve", append(buildKeys, "builder.schedule")...)
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	return builder.Serve(ctx, cfg, builder.ServeOptions{Logger: slog.New(slog.NewJSONHandler(e.stderr, nil))})
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
	fmt.Fprintf(e.stdout, "  documents:    %d (%d courses, %d classes)\n", c.Counts.Documents, c.Counts.Courses, c.Counts.Classes)
	fmt.Fprintf(e.stdout, "kept snapshots, newest first (%d):\n", len(st.Kept))
	for _, s := range st.Kept {
		mark := " "
		if s.Current {
			mark = "*"
		}
		fmt.Fprintf(e.stdout, "%s %s  built %s  %d documents, %d courses, %d classes\n",
			mark, s.ID, s.BuiltAt.Format(time.RFC3339), s.Counts.Documents, s.Counts.Courses, s.Counts.Classes)
	}
}

// cmdRollback makes a kept snapshot current.
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
	now, err := builder.Rollback(ctx, cfg, id, func() { fmt.Fprintln(e.stderr, "waiting for another builder…") })
	if err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	fmt.Fprintf(e.stdout, "snapshot %s is current\n", now)
	return nil
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
