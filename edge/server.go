// Package edge is the HTTP server external applications call: its routes, handlers, front
// middleware, errors, health checks and OpenAPI description. It answers the static
// endpoints from the in-memory snapshot edge/docstore holds, admits requests through
// edge/auth (tokens and limits), runs the class search through edge/search, and reports
// through edge/telemetry. None of those parts knows the server: each gets what it needs
// through its own Options.
package edge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/apidocs"
	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/docstore"
	"github.com/trainingco/catalogue/edge/ratelimit"
	"github.com/trainingco/catalogue/edge/search"
	"github.com/trainingco/catalogue/edge/student"
	"github.com/trainingco/catalogue/edge/telemetry"
	"github.com/trainingco/catalogue/templates"
)

// Options are the server's dependencies. Store, Replica and Templates are required.
type Options struct {
	Config  config.Config
	Store   store.Store
	Replica *pgxpool.Pool // searched live
	// Tokens is read for the token hashes; nil: Replica. A pool of its own keeps searches
	// that hold every connection of Replica from holding back a revocation (D22).
	Tokens    *pgxpool.Pool
	Templates *templates.Set
	Logger    *slog.Logger // nil: slog.Default()
	// RequestLog, when set, receives the line logged for each request, one Write per line,
	// in the JSON Logger would write with slog.NewJSONHandler but encoded by the edge at a
	// fraction of slog's cost. nil: request lines go through Logger like every other line.
	RequestLog io.Writer
	Now        func() time.Time // nil: time.Now; tests inject a fake clock
	// Limiter keeps every rate limit: per token and per address. nil: each in memory, in a
	// limiter of its own. A ratelimit.Shared (edge.redis_url) has its state in /metrics.
	Limiter ratelimit.Limiter
	// JWT verifies students' JWTs (D30); nil: API tokens only. Required when
	// Config.Edge.JWT has a key; cmd/edge makes it from the configuration (it fetches a
	// JWKS in the background, so it needs the process's context).
	JWT      *auth.JWTVerifier
	Registry *prometheus.Registry // nil: a new registry, served by MetricsHandler
	// OnSwap, when set, is told the id of every snapshot the edge starts serving, after the
	// swap (cmd/edge reports it for the webhooks, D42).
	OnSwap func(snapshotID string)
}

// Server is the edge. Create it with New, start background work with Start, and serve its
// Handler; cancelling Start's context stops the background work, and the http.Server that
// serves the Handler shuts down the connections (cmd/edge).
type Server struct {
	opts    Options
	cfg     config.Edge
	log     *slog.Logger
	now     func() time.Time
	loc     *time.Location // the configured timezone
	echo    *echo.Echo
	docs    *docstore.Holder   // the current snapshot
	apiDocs *apidocs.Docs      // the documentation page
	auth    *auth.Gate         // token hashes and limits
	search  *search.Searcher   // the live class search
	days    *dayWatch          // the snapshot's day against the edge's
	student *student.Reader    // the per-student fields of the class read (D32)
	metrics *telemetry.Metrics // Prometheus collectors
	ids     *telemetry.RequestIDs
	reqLog  *telemetry.RequestLog

	cacheControl       []string // Cache-Control of every static read
	searchCacheControl []string // Cache-Control of every search answer
	retryAfter         []string // Retry-After of a 503 before the first snapshot
	license            string   // feeds.license, named by every feed page (D35)
	// proxies are edge.trusted_proxies, whose X-Forwarded-Proto and -Host the feeds'
	// URLs believe (D37).
	proxies   []netip.Prefix
	feedPages feedPages   // the gzip feed pages of the snapshot served
	draining  atomic.Bool // told to stop: /readyz answers 503 (Drain)
}

// New builds a server; it does not start background work or listen.
func New(opts Options) (*Server, error) {
	if opts.Store == nil || opts.Replica == nil || opts.Templates == nil {
		return nil, errors.New("edge: Options.Store, Replica and Templates are required")
	}
	if opts.JWT == nil && opts.Config.Edge.JWT.Enabled() {
		return nil, errors.New("edge: Options.JWT is required when edge.jwt.hmac_secret or edge.jwt.jwks_url is set")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	// The zone of "today" (D1), resolved once: LoadLocation reads its file on every call.
	loc, err := time.LoadLocation(opts.Config.Timezone)
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	cfg := opts.Config.Edge
	s := &Server{opts: opts, cfg: cfg, log: opts.Logger, now: opts.Now, loc: loc,
		metrics:            telemetry.NewMetrics(opts.Registry),
		ids:                telemetry.NewRequestIDs(),
		reqLog:             requestLog(opts),
		cacheControl:       header("private, max-age=" + strconv.Itoa(int(cfg.CacheMaxAge/time.Second))),
		searchCacheControl: header("private, max-age=" + strconv.Itoa(int(cfg.SearchCache/time.Second))),
		retryAfter:         header(strconv.Itoa(max(1, int(cfg.PollInterval/time.Second)))),
		license:            opts.Config.Feeds.License,
	}
	for _, cidr := range cfg.TrustedProxies {
		if p, err := netip.ParsePrefix(cidr); err == nil { // config.Validate refused the others
			s.proxies = append(s.proxies, p.Masked())
		}
	}
	apiDocs, err := apidocs.New(cfg.BasePath)
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	s.apiDocs = apiDocs
	s.days = &dayWatch{metrics: s.metrics, log: s.log, now: s.now, loc: loc}
	s.docs = docstore.New(s.docsOptions())
	s.auth = auth.New(auth.Options{Pool: cmp.Or(opts.Tokens, opts.Replica), Templates: opts.Templates, Refresh: cfg.TokenRefresh,
		RateLimit: cfg.RateLimit, Limiter: opts.Limiter, Failures: opts.Limiter, Now: opts.Now, Logger: opts.Logger,
		JWT: opts.JWT})
	s.metrics.TokenSetAge(s.auth.Age)
	if l, ok := opts.Limiter.(telemetry.SharedLimiter); ok {
		s.metrics.WatchLimiter(l)
	}
	s.student = student.NewReader(opts.Replica, opts.Templates, cfg.SearchTimeout)
	s.search = search.New(search.Options{Pool: opts.Replica, Templates: opts.Templates,
		Timeout: cfg.SearchTimeout, CacheTTL: cfg.SearchCache, Index: cfg.SearchIndex, Now: opts.Now,
		Registry: opts.Registry, Logger: opts.Logger, Observe: s.metrics.ObserveSearch})
	s.echo = s.newEcho()
	return s, nil
}

// requestLog is where the line of each request goes: nowhere when log.requests is off.
func requestLog(opts Options) *telemetry.RequestLog {
	if !opts.Config.Log.Requests {
		return nil
	}
	return telemetry.NewRequestLog(opts.Logger, opts.RequestLog)
}

// docsOptions are the options of the server's snapshot holder: swaps are recorded in the
// metrics and their day checked, refusals counted (the callbacks hold those, not the
// server).
func (s *Server) docsOptions() docstore.Options {
	m, days, served := s.metrics, s.days, s.opts.OnSwap
	return docstore.Options{Store: s.opts.Store, CacheDir: s.cfg.CacheDir, PollInterval: s.cfg.PollInterval,
		Logger: s.log, OnSwap: func(snap *docstore.Snapshot) {
			m.SnapshotLoaded(snap.ID(), snap.BuiltAt(), snap.PublishedAt())
			days.check(snap)
			if served != nil {
				served(snap.ID())
			}
		}, OnRefuse: func(string) { m.SnapshotRefused() }, OnStore: m.StoreResult}
}

// Handler returns the HTTP handler of every route.
func (s *Server) Handler() http.Handler { return s.echo }

// MetricsHandler answers Prometheus scrapes of the server's registry; cmd/edge serves it on
// edge.metrics_listen, never beside Handler on the public edge.listen (D26).
func (s *Server) MetricsHandler() http.Handler { return s.metrics.Handler() }

// Start loads the first snapshot, token set and search index (without failing when the store
// or database is down: the edge then reports not ready, or searches in the replica alone,
// and keeps trying) and starts the background pollers, which stop when ctx is done. The
// index loads beside the snapshot.
func (s *Server) Start(ctx context.Context) {
	s.auth.Start(ctx)
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		s.search.Start(ctx)
	}()
	s.docs.Start(ctx)
	go s.days.run(ctx, s.docs.Current)
	<-indexed
}

// getHead are the methods of every route: Echo does not route HEAD to a GET handler by
// itself, and HEAD must answer like GET without the body.
var getHead = []string{http.MethodGet, http.MethodHead}

// newEcho registers the middleware and every route. Two middleware run on every request,
// in this order: front (middleware.go: the request id, log and metrics, so every outcome,
// 405s and panics included, is counted and logged; security headers; 405 for anything but
// GET and HEAD; recovery from panics), then CORS. Echo builds each middleware's closure
// anew for every request, so the checks are one middleware, not a chain. Routes under
// /public are wrapped once, when registered, in the token check and, inside it, the rate
// limit, which needs to know the token.
func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = s.ipExtractor()
	e.Use(s.front, s.cors())

	// Any other path needs no token either; it counts against the address like a failed
	// authentication (stray.go).
	e.RouteNotFound("/*", s.handleStray)

	// Outside the versioned base path, no token: probes. /metrics is not here: it is served
	// on edge.metrics_listen only (MetricsHandler), away from the public (D26).
	e.Match(getHead, "/healthz", s.handleHealthz)
	e.Match(getHead, "/readyz", s.handleReadyz)

	api := e.Group(s.cfg.BasePath)
	// The API description, public so that client generators can fetch it.
	api.Match(getHead, "/openapi.json", s.handleOpenAPI)
	// The documentation page rendering it and the page's files, public too: for partner
	// developers' browsers.
	api.Match(getHead, "/docs", s.handleDocs)
	api.Match(getHead, "/docs/*", s.handleDocs)

	// Everything else needs a token and counts against its limit, unknown paths included:
	// they answer 404 only to a valid token.
	pub := api.Group("/public")
	auth := s.requireToken
	pub.RouteNotFound("", auth(echo.NotFoundHandler))
	pub.RouteNotFound("/*", auth(echo.NotFoundHandler))
	pub.Match(getHead, "/courses", auth(s.handleCourses))               // marketing sites: the whole catalogue
	pub.Match(getHead, "/popular", auth(s.handlePopular))               // home pages: three most popular
	pub.Match(getHead, "/course/:id", auth(s.handleCourse))             // course pages
	pub.Match(getHead, "/class/:id", auth(s.handleClass))               // registration pages
	pub.Match(getHead, "/classes", auth(s.handleSearch))                // search boxes and calendars
	pub.Match(getHead, "/course/:id/classes", auth(s.handleSearch))     // a course page's class list
	pub.Match(getHead, courseFeed.path, auth(s.handleFeed(courseFeed))) // partners' mirrors (RPDE)
	pub.Match(getHead, classFeed.path, auth(s.handleFeed(classFeed)))

	var patterns []string
	for _, r := range e.Routes() {
		if r.Path != "/*" { // handleStray's: its requests are counted and logged as unmatched
			patterns = append(patterns, r.Path)
		}
	}
	s.metrics.SetRoutes(patterns)
	return e
}

// ipExtractor decides the client address, which limits failed authentication (D23). By
// default it is the direct peer, so X-Forwarded-For cannot be forged to escape the limit.
// Behind load balancers every peer is a balancer, and one client's bad tokens would block
// everyone; edge.trusted_proxies names them so X-Forwarded-For is read, trusting only those
// hops (Echo's defaults would also trust every private and loopback address).
func (s *Server) ipExtractor() echo.IPExtractor {
	if len(s.cfg.TrustedProxies) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, cidr := range s.cfg.TrustedProxies {
		if _, n, err := net.ParseCIDR(cidr); err == nil { // config.Validate refused the others
			opts = append(opts, echo.TrustIPRange(n))
		}
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
