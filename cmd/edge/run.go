package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/cmd/internal/logging"
	"github.com/trainingco/catalogue/cmd/internal/metricsserve"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge"
	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/cork"
	"github.com/trainingco/catalogue/edge/ratelimit"
	"github.com/trainingco/catalogue/templates"
)

// Limits of the HTTP server. Clients send small GET requests and read small bodies, so
// generous values still close slow or idle connections that would otherwise pile up.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = config.EdgeWriteTimeout // edge.search_timeout is bounded under it
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 20 * time.Second // in-flight requests get this long after a signal
	// maxHeaderBytes is net/http's bound on a request's headers, past which it answers a
	// plain-text 431 before any handler (it adds 4 KiB of slack): twice the edge's
	// (edge.MaxRequestHead, D46), which answers JSON between the two. Tokens and JWTs take
	// a few KiB; net/http's default of 1 MiB would let every request hold a megabyte.
	maxHeaderBytes = 2 * edge.MaxRequestHead
)

// Pool settings. The edge queries the replica only for the class search and the token
// hashes, so a few connections serve it; connect_timeout in the URL overrides the default.
const (
	maxConns       = 8
	connectTimeout = 5 * time.Second
	// statementMargin is how much longer than edge.search_timeout PostgreSQL lets a
	// statement of the edge run: the edge's own deadline answers the client first, and the
	// server's ends the statement should the edge's cancel request be lost.
	statementMargin = config.SearchTimeoutMargin
)

// run is the whole command: it parses args, serves until ctx is done, then shuts down.
// Logs are JSON on stderr, request lines in batches (logWriter); stdout only gets the help
// text asked for with -h.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	out := newLogWriter(stderr, batchSize, batchDelay)
	defer func() { _ = out.Flush() }() // the request lines of the last batch
	log := logging.New(out)
	log.Info("configuration", "config", cfg) // one field per key, secrets redacted (config.LogValue)
	if cfg.Edge.CacheDir == "" {
		// Off by default: the bare binary knows no folder it may write (the units and the
		// image set one). Said at start, not found out during the next store outage.
		log.Warn("edge.cache_dir is not set: if this edge starts while the store is unreachable, it answers 503 until the store is back; set it to a folder of this edge's own")
	}

	// What runs in the background (the loaders, the JWKS refresh, the report of the snapshot
	// served) lives until serve has stopped, not until the signal: the edge goes on serving
	// for edge.shutdown_delay after it, and must keep its promises meanwhile (a revoked token
	// refused within edge.token_refresh, D22; the snapshot it reports served, D42).
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	defer end()
	opts, closeAll, err := dependencies(life, cfg, log, out)
	if err != nil {
		return err
	}
	defer closeAll() // after Shutdown: requests in flight still search and are counted
	srv, err := edge.New(opts)
	if err != nil {
		return err
	}
	if cfg.Edge.MetricsListen != "" {
		stop, err := metricsserve.Serve("edge.metrics_listen", cfg.Edge.MetricsListen, srv.MetricsHandler(), log)
		if err != nil {
			return err
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", cfg.Edge.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// The port opens before the first loads, so that probes get /readyz's 503 rather than a
	// refused connection while the snapshot and the token set load (up to the start
	// timeout's 10 s when the store hangs).
	started := make(chan struct{})
	go func() {
		defer close(started)
		srv.Start(life) // background loaders stop with life
		// The first loads are done, loaded or not: /readyz says which. Tests of the binary
		// wait for this line.
		log.Info("started")
	}()
	defer func() { <-started }() // before the pools close: the first loads use them
	err = serve(ctx, log, ln, srv.Handler(), drain{srv.Drain, cfg.Edge.ShutdownDelay})
	end() // before waiting for the first loads, which a store that hangs holds up
	return err
}

// drain is what serve does when told to stop, before it stops accepting connections:
// start (edge.Server.Drain: /readyz answers 503), then serve on for delay
// (edge.shutdown_delay), so that load balancers take the edge out of rotation first.
type drain struct {
	start func()
	delay time.Duration
}

// dependencies opens what the edge serves from: the templates, the store, the replica, the
// token set, the shared rate limiter and the JWT verifier, and starts reporting the
// snapshot served to Redis. closeAll closes them, the replica's pool last; on an error
// what was opened is closed already.
func dependencies(ctx context.Context, cfg config.Config, log *slog.Logger, out *logWriter) (edge.Options, func(), error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (edge.Options, func(), error) { closeAll(); return edge.Options{}, nil, err }
	tpl, err := templates.Load(cfg.Templates.Dir)
	if err != nil {
		return fail(err)
	}
	st, err := store.Open(ctx, store.Options(cfg.Store))
	if err != nil {
		return fail(fmt.Errorf("open store: %w", err))
	}
	pool, err := openReplica(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, pool.Close)
	tokens, err := openTokens(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, tokens.Close)
	opts := edge.Options{Config: cfg, Store: st, Replica: pool, Tokens: tokens, Templates: tpl, Logger: log, RequestLog: out.batch()}
	limiter, err := sharedLimiter(ctx, cfg.Edge, log)
	if err != nil {
		return fail(err)
	}
	if limiter != nil {
		closers = append(closers, func() { limiter.Close() })
		opts.Limiter = limiter
	}
	if opts.JWT, err = newJWTVerifier(ctx, cfg.Edge.JWT, log); err != nil {
		return fail(err)
	}
	served, err := newServedReporter(cfg, log)
	if err != nil {
		return fail(err)
	}
	if served != nil {
		opts.OnSwap = served.swapped
		go served.run(ctx)
	}
	return opts, closeAll, nil
}

// localKeys bounds the keys an edge counts in memory while Redis is out.
const localKeys = 100_000

// sharedLimiter returns the rate limiter shared through Redis when edge.redis_url is set,
// with this edge's memory standing in while Redis does not answer; nil when it is not set.
func sharedLimiter(ctx context.Context, cfg config.Edge, log *slog.Logger) (*ratelimit.Shared, error) {
	if cfg.RedisURL == "" {
		return nil, nil
	}
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: cfg.RedisURL, Password: cfg.RedisPassword, Timeout: cfg.RedisTimeout})
	if err != nil {
		return nil, fmt.Errorf("edge.redis_url: %w", err)
	}
	// The memory that counts during an outage holds addresses too, which a flood can vary
	// at will: bounded, like the failures limiter of a single edge.
	local := ratelimit.NewMemory(time.Minute, nil, ratelimit.MaxKeys(localKeys))
	return ratelimit.NewShared(ctx, ratelimit.SharedOptions{Redis: r, Local: local, Log: log}), nil
}

// parseConfig reads the flags and loads the configuration they name.
func parseConfig(args []string, stdout, stderr io.Writer) (config.Config, error) {
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "YAML configuration `file` (optional: defaults and CATALOGUE_* variables apply)")
	listen := fs.String("listen", "", "`address` to listen on, such as :8080 or 127.0.0.1:0; overrides edge.listen")
	usage := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprintln(w, "usage: edge [--config FILE] [--listen ADDRESS]")
		fs.PrintDefaults()
	}
	// Parse prints a bad flag's error itself, then calls Usage; the usage is printed here
	// instead, once: to stdout when asked for with -h, to stderr after an error.
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return config.Config{}, err
		}
		usage(stderr)
		return config.Config{}, usageError{err}
	}
	if fs.NArg() > 0 {
		return config.Config{}, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	overrides := map[string]any{}
	if *listen != "" {
		overrides["edge.listen"] = *listen
	}
	return config.Load(*path, overrides)
}

// openReplica returns the search's pool on the read replica. It does not connect: pgxpool
// opens connections on first use, so the edge starts, and serves every static document,
// while the database is down.
func openReplica(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	return openPool(ctx, cfg, maxConns, cfg.Edge.SearchTimeout+statementMargin)
}

// openTokens returns the pool of one connection the token hashes are reloaded through: on
// the search's pool, searches holding every connection would hold back a revocation (D22).
// Its statements are bounded like the reload itself (5 s in edge/auth), plus the margin.
func openTokens(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	return openPool(ctx, cfg, 1, tokenStatementTimeout)
}

// tokenStatementTimeout is the reload's own bound (auth.TokenQueryTimeout) and statementMargin.
const tokenStatementTimeout = auth.TokenQueryTimeout + statementMargin

// openPool returns a pool of at most conns connections to the replica whose statements
// PostgreSQL ends after statementTimeout.
func openPool(ctx context.Context, cfg config.Config, conns int32, statementTimeout time.Duration) (*pgxpool.Pool, error) {
	if cfg.ReplicaURL() == "" {
		return nil, errors.New("replica.url or database.url: must be set: the edge searches it and reads token hashes from it")
	}
	pc, err := pgxpool.ParseConfig(cfg.ReplicaURL())
	if err != nil {
		return nil, fmt.Errorf("parse replica.url: %w", err)
	}
	// plan_cache_mode stays PostgreSQL's default: the search's page query reads classes by
	// key, and its prepared statement's generic plan (after five runs) saves planning each
	// search; search.sql, whose plan must fit the filters given, runs as an unnamed
	// statement, planned at each run (edge/search).
	pc.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(statementTimeout.Milliseconds(), 10)
	pc.MaxConns = conns
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = connectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open replica pool: %w", err)
	}
	return pool, nil
}

// serve answers HTTP on ln until ctx is done, then stops accepting connections and waits
// up to shutdownTimeout for the requests in flight.
func serve(ctx context.Context, log *slog.Logger, ln net.Listener, h http.Handler, d drain) error {
	// The actual address, so that tests and scripts listening on port 0 can find it.
	log.Info("listening", "addr", ln.Addr().String())
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnContext:       cork.ConnContext, // for edge's large bodies (cork.Write)
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if d.delay > 0 {
		d.start()
		// Each answer meanwhile closes its connection, so that a client's next request
		// opens one, which the load balancer sends to another edge.
		hs.SetKeepAlivesEnabled(false)
		log.Info("draining: /readyz answers 503, requests are served", "edge.shutdown_delay", d.delay.String())
		time.Sleep(d.delay)
	}
	log.Info("shutting down", "timeout", shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	log.Info("stopped")
	return nil
}
