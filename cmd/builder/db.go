package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/builder/seed"
	"github.com/trainingco/catalogue/builder/webhook/queue"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

// connect opens a connection to the primary, which the admin commands write to.
func connect(ctx context.Context, cfg config.Config) (*pgx.Conn, error) {
	if cfg.Database.URL == "" {
		return nil, fmt.Errorf("database.url: must be set (--database-url or %s)", config.EnvName("database.url"))
	}
	conn, err := pgx.Connect(ctx, cfg.Database.URL)
	if err != nil {
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	return conn, nil
}

// cmdMigrate applies the reference schema and, with builder.listen on, the change-capture
// triggers (off: removes them); a second run changes nothing.
func cmdMigrate(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "migrate", append(dbKeys, "builder.listen")...)
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	tpl, err := templates.Load(cfg.Templates.Dir)
	if err != nil {
		return err
	}
	if cfg.Templates.Dir != "" && !tpl.FromDir(templates.Mapping) {
		// The reference mapping would create its tables in the provider's database, and
		// every build would publish them, empty.
		return fmt.Errorf("migrate: templates.dir %s has no %s, so the reference mapping would be applied: write your mapping there (templates/README.md), "+
			"or unset templates.dir for the reference schema (copy templates/%s there to keep it beside other templates)", cfg.Templates.Dir, templates.Mapping, templates.Mapping)
	}
	conn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// What the schema holds before and after says what this run did: on an empty database
	// everything, on an up-to-date one nothing (the statements are idempotent).
	before, err := seed.ReadObjects(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := seed.Migrate(ctx, conn, tpl, cfg.Builder.Listen); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := queue.Migrate(ctx, cfg.Database.URL); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	after, err := seed.ReadObjects(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	notifications := "off"
	if cfg.Builder.Listen {
		notifications = "on"
	}
	changes := seed.Changes(before, after)
	if len(changes) == 0 {
		fmt.Fprintf(e.stdout, "schema is up to date; change notifications are %s (builder.listen)\n", notifications)
		return nil
	}
	for _, c := range changes {
		fmt.Fprintln(e.stdout, c)
	}
	fmt.Fprintf(e.stdout, "schema migrated: %d changes; change notifications are %s (builder.listen)\n", len(changes), notifications)
	return nil
}

// cmdSeed fills the reference schema with deterministic sample data.
func cmdSeed(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "seed", dbKeys...)
	var o seed.Options
	fs.IntVar(&o.Courses, "courses", 200, "number of courses")
	fs.IntVar(&o.Classes, "classes", 5000, "number of classes")
	fs.IntVar(&o.Registrations, "registrations", 40000, "number of registrations")
	fs.Int64Var(&o.Seed, "seed", 1, "random seed: the same options always give the same data")
	fs.BoolVar(&o.Reset, "reset", false, "empty the catalogue tables first (api_tokens are kept)")
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	o.Today = cfg.Today(time.Now())
	conn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	st, err := seed.Seed(ctx, conn, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "seeded %d courses, %d locations, %d rooms, %d classes, %d registrations in %.2fs\n",
		st.Courses, st.Locations, st.Rooms, st.Classes, st.Registrations, st.Duration.Seconds())
	return nil
}

// tokenCreate issues a token. The token is the last line of stdout, so that scripts can
// take it with tail -n 1; it is never stored, so it is shown only this once.
func tokenCreate(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "token create", "database.url")
	name := fs.String("name", "", "the application the token is issued to (required)")
	limitFlag := fs.String("rate-limit", "", "the token's own limit: `N` requests in any rolling minute (default: edge.rate_limit)")
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	if *name == "" {
		return usagef("token create: --name is required")
	}
	limit, err := parseLimit("token create: --rate-limit", *limitFlag)
	if err != nil {
		return err
	}
	conn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	id, token, err := apitoken.CreateWithLimit(ctx, conn, *name, limit)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "token %d issued to %q. It is shown only once, now: store it safely.\n", id, *name)
	fmt.Fprintln(e.stdout, token)
	return nil
}

// tokenSetLimit sets one token's limit, or puts it back to edge.rate_limit.
func tokenSetLimit(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "token set-limit", "database.url")
	cfg, pos, err := setup(fs, cf, args, 2, 2)
	if err != nil {
		return helpIsNoError(err)
	}
	id, err := parseID("token set-limit", pos[0])
	if err != nil {
		return err
	}
	limit, err := parseLimit("token set-limit: N", pos[1])
	if err != nil {
		return err
	}
	conn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := apitoken.SetLimit(ctx, conn, id, limit); err != nil {
		return err
	}
	what := fmt.Sprintf("%d requests per rolling minute", limit)
	if limit == 0 {
		what = "edge.rate_limit"
	}
	fmt.Fprintf(e.stdout, "token %d is limited at %s; edges apply it within edge.token_refresh\n", id, what)
	return nil
}

// byID starts a command on one record: fs's flags and the one ID argument parsed, then a
// connection to the database, which the caller closes. An error from -h is flag.ErrHelp.
func byID(ctx context.Context, fs *flag.FlagSet, cf *configFlags, args []string) (config.Config, int64, *pgx.Conn, error) {
	cfg, pos, err := setup(fs, cf, args, 1, 1)
	if err != nil {
		return cfg, 0, nil, err
	}
	id, err := parseID(strings.TrimPrefix(fs.Name(), "builder "), pos[0])
	if err != nil {
		return cfg, 0, nil, err
	}
	conn, err := connect(ctx, cfg)
	return cfg, id, conn, err
}

// parseID parses the ID argument of command cmd: a token's or a webhook endpoint's id, as
// their list commands show it.
func parseID(cmd, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s: ID must be a positive integer (got %q)", cmd, s)
	}
	return id, nil
}

// parseLimit reads a token's limit as written on the command line: a positive number of
// requests per rolling minute, or "default" (or nothing) for edge.rate_limit, which is 0.
func parseLimit(what, s string) (int, error) {
	if s == "" || s == "default" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > math.MaxInt32 {
		return 0, usagef("%s must be a number of requests per rolling minute from 1 to %d, or default (got %q)", what, math.MaxInt32, s)
	}
	return n, nil
}

// tokenList lists the tokens; the tokens themselves are not stored, so never shown.
func tokenList(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "token list", "database.url")
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	conn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	infos, err := apitoken.List(ctx, conn)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tRATE LIMIT\tCREATED\tREVOKED")
	for _, i := range infos {
		revoked := "-"
		if i.RevokedAt != nil {
			revoked = i.RevokedAt.UTC().Format(time.RFC3339)
		}
		limit := "default"
		if i.RateLimit != nil {
			limit = strconv.Itoa(*i.RateLimit) + "/min"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i.ID, apitoken.DisplayName(i.Name), limit, i.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

// tokenRevoke revokes one token by id.
func tokenRevoke(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "token revoke", "database.url")
	_, id, conn, err := byID(ctx, fs, cf, args)
	if err != nil {
		return helpIsNoError(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := apitoken.Revoke(ctx, conn, id); err != nil {
		if errors.Is(err, apitoken.ErrAlreadyRevoked) {
			fmt.Fprintf(e.stdout, "token %d was already revoked\n", id)
			return nil
		}
		return err
	}
	fmt.Fprintf(e.stdout, "token %d revoked; edges refuse it within 30 s, once they read the token list again (an edge that cannot read it keeps the list it read last)\n", id)
	return nil
}
