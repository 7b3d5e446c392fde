package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

//go:generate go run ./internal/gendocs

// Key is the one declaration of a configuration key. The Config field it fills is the one
// Name spells without its underscores (edge.jwt.jwks_url is Edge.JWT.JWKSURL: matchName),
// and TestKeysAreTheDeclaration checks that every field is one key's. Default, viper's
// defaults, the environment variable (EnvName), the unknown-key check, the validation
// (Validate), the example file (catalogue.example.yaml) and the key table (README.md#keys)
// all come from it; TestGeneratedDocsAreCurrent fails when a committed file differs.
type Key struct {
	Name string // dotted, as in the file: "edge.rate_limit"
	// Default is the value when nothing sets the key, of the field's own type; nil is the
	// zero value (an empty string, list or duration).
	Default any
	// Shown replaces the default in the key table when the value alone would mislead
	// (replica.url's empty value means database.url).
	Shown string
	// Doc is the key's one text, in Markdown (code spans, links): its first sentence, up to
	// the first ". ", is the key table's meaning; the whole of it, as plain text wrapped at
	// generation, is the example file's comment (docText). So a fact is written once, and
	// the first sentence must say what the key is on its own (TestKeyDocsSplit).
	Doc string
	// Check calls bad for each thing wrong with the key's value in c (other keys' values
	// may bound it); nil: any value of the field's type is right.
	Check func(c Config, bad Bad)
}

// keys declares every configuration key, in the order of the example file and the table:
// the keys of a section together.
var keys = []Key{
	{Name: "database.url",
		Doc: "The provider's primary PostgreSQL: `builder migrate`, `seed` and " +
			"`token` write to it, and `builder run` and `serve` take their advisory " +
			"lock on it (only one builder publishes at a time). Every command that " +
			"touches PostgreSQL needs it, in the form " +
			"`postgres://catalogue:secret@db.example.internal:5432/provider?sslmode=require`. " +
			"A password here is redacted when the configuration is logged; better " +
			"set it as `CATALOGUE_DATABASE_URL` than here.",
		Check: func(c Config, bad Bad) { postgresURL(c.Database.URL, bad) },
	},
	{Name: "replica.url",
		Shown: "database.url",
		Doc: "The read replica: the builder reads the catalogue from it, the edge " +
			"searches it live and loads the token hashes from it. Empty means " +
			"`database.url`.",
		Check: func(c Config, bad Bad) { postgresURL(c.Replica.URL, bad) },
	},
	{Name: "store.url",
		Default: "file://./data/catalogue",
		Doc: "Where snapshots are published: `file://PATH` (a local folder, needs no " +
			"server) or `s3://BUCKET/PREFIX` (S3 or any S3-compatible service such " +
			"as MinIO). The builder creates the folder or bucket when it does not " +
			"exist yet. S3 credentials come from the usual AWS sources " +
			"(`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, profiles, instance " +
			"roles), never from this file.",
		Check: func(c Config, bad Bad) {
			if err := validateStoreURL(c.Store.URL); err != nil {
				bad(err.Error(), quoted(c.Store.URL))
			}
		},
	},
	{Name: "store.endpoint",
		Doc: "The endpoint of an S3-compatible service, such as " +
			"`http://127.0.0.1:9000` for MinIO; when set, requests use path-style " +
			"addressing. Empty means AWS S3.",
		Check: func(c Config, bad Bad) {
			if u, err := url.Parse(c.Store.Endpoint); c.Store.Endpoint != "" && (err != nil || u.Scheme == "" || u.Host == "") {
				bad("must be a URL such as http://127.0.0.1:9000", quoted(c.Store.Endpoint))
			}
		},
	},
	{Name: "store.region",
		Default: "us-east-1",
		Doc:     "The S3 region.",
		Check: func(c Config, bad Bad) {
			if strings.TrimSpace(c.Store.Region) == "" {
				bad("must name a region, such as us-east-1", quoted(c.Store.Region))
			}
		}},
	{Name: "timezone",
		Default: "UTC",
		Doc: "The IANA time zone that defines \"today\" (D1), which builder and edge " +
			"must agree on: which classes are upcoming, which have started. An edge " +
			"serving a snapshot built for another zone says so in its log.",
		Check: func(c Config, bad Bad) {
			if _, err := time.LoadLocation(c.Timezone); err != nil || c.Timezone == "" {
				bad("must be an IANA time zone such as UTC or Europe/Berlin", quoted(c.Timezone))
			}
		},
	},
	{Name: "templates.dir",
		Doc: "A folder of SQL files that replace the embedded templates of the same " +
			"name, for a provider whose schema differs from the reference schema: " +
			"your `mapping.sql`, which maps it to the views the catalogue reads " +
			"([templates/README.md](../templates/README.md)), and, rarely, the " +
			"reads (`courses.sql`, `classes.sql`, `search.sql`, ...). A file with " +
			"an unknown name, or naming a template that is always embedded, is " +
			"refused. Empty means the embedded templates only."},
	{Name: "builder.schedule",
		Default: "*/5 * * * *",
		Doc: "When `builder serve` builds, at least a minute apart, as a cron spec in " +
			"the configured time zone: five fields (minute hour day-of-month month " +
			"day-of-week) or a descriptor such as `@hourly` or `\"@every 10m\"`. " +
			"Each is a full build, reading the whole catalogue from the replica. " +
			"`builder serve` also builds once at start. A build still running when " +
			"the next is due makes that one skip.",
		Check: func(c Config, bad Bad) {
			sched, err := cron.ParseStandard(c.Builder.Schedule)
			if err != nil {
				bad("must be a cron spec such as */5 * * * *", quoted(c.Builder.Schedule))
				return
			}
			if gap := scheduleGap(sched, time.Now().In(c.Location())); gap > 0 && gap < MinScheduleGap {
				bad(fmt.Sprintf("must leave at least a minute between builds, each a full build (this one leaves %v)", gap), quoted(c.Builder.Schedule))
			}
		},
	},
	{Name: "builder.keep",
		Default: 10,
		Doc: "How many snapshots are kept in all for rollback, the current one " +
			"included: it and the `builder.keep` - 1 that were current most " +
			"recently before it (`current.json` lists them; `builder rollback` can " +
			"return to those). A build stopped before its pointer is never kept. " +
			"Older snapshots and the objects only they use are deleted after each " +
			"publication. At least 1.",
		Check: func(c Config, bad Bad) {
			if c.Builder.Keep < 1 {
				bad("must be >= 1", c.Builder.Keep)
			}
		},
	},
	{Name: "builder.max_shrink",
		Default: 0.5,
		Doc: "The publish guard: a build whose public course or class count falls by " +
			"more than this fraction (0 to 1) against the current snapshot is " +
			"refused unless run with `--force`. 0 refuses any fall; 1 never " +
			"refuses.",
		Check: func(c Config, bad Bad) {
			if c.Builder.MaxShrink < 0 || c.Builder.MaxShrink > 1 {
				bad("must be between 0 and 1", c.Builder.MaxShrink)
			}
		},
	},
	{Name: "builder.collect_grace",
		Default: time.Hour,
		Doc: "How long a snapshot that the pointer does not keep (a build still " +
			"publishing, one that stopped before its pointer, one past " +
			"`builder.keep`) stays in the store, with its objects, after its build " +
			"started. It must exceed the longest publication: a builder that lost " +
			"its lock without knowing it may still be storing objects that this " +
			"snapshot names.",
		Check: func(c Config, bad Bad) {
			if c.Builder.CollectGrace <= 0 {
				bad("must be > 0", c.Builder.CollectGrace)
			}
		},
	},
	{Name: "builder.listen",
		Default: true,
		Doc: "Freshness " +
			"([builder/README.md](../builder/README.md#freshness-a-committed-change-is-served-within-seconds)): " +
			"`builder serve` LISTENs on `database.url` for the notifications of the " +
			"triggers that `builder migrate` installs, and publishes each committed " +
			"change within seconds. It needs the primary (a standby delivers no " +
			"notifications: [OPERATIONS.md](OPERATIONS.md#postgresql)), and " +
			"re-renders only the documents a change affects; `builder.schedule` stays as the safety net. Off: builds run " +
			"on the schedule only, and `builder migrate` removes the triggers (so " +
			"the primary's writes pay nothing)."},
	{Name: "builder.debounce",
		Default: 100 * time.Millisecond,
		Doc: "The quiet period after a change before its build starts: a burst of " +
			"changes closer together than this makes one build.",
		Check: func(c Config, bad Bad) {
			if c.Builder.Debounce < 0 {
				bad("must not be negative", c.Builder.Debounce)
			}
		},
	},
	{Name: "builder.max_delay",
		Default: time.Second,
		Doc: "The longest a change waits for its build while more changes keep " +
			"coming, at least `builder.debounce`: the build starts once " +
			"`builder.debounce` has passed without a change, or this long after the " +
			"first change it answers, whichever is first.",
		Check: func(c Config, bad Bad) {
			if c.Builder.MaxDelay < c.Builder.Debounce {
				bad(fmt.Sprintf("must be at least builder.debounce (%v)", c.Builder.Debounce), c.Builder.MaxDelay)
			}
		},
	},
	{Name: "builder.replica_wait",
		Default: 10 * time.Second,
		Doc: "The longest a build told of a change waits for `replica.url` to replay " +
			"the primary's log past that change before it reads anyway, at most 1m. " +
			"`builder serve` then builds the change again, backing off as after a " +
			"failed build, until a build finds the replica has it. While the replica lags " +
			"further behind, every such build waits this long and holds up the " +
			"builds after it (one runs at a time), the scheduled ones included.",
		Check: func(c Config, bad Bad) {
			if c.Builder.ReplicaWait <= 0 {
				bad("must be a positive duration such as 10s", c.Builder.ReplicaWait)
			}
			if c.Builder.ReplicaWait > MaxReplicaWait {
				bad("must be at most 1m: while the replica lags, every build told of a change waits this long, and the builds after it with it", c.Builder.ReplicaWait)
			}
		},
	},
	{Name: "builder.metrics_listen",
		Doc: "The address where `builder serve` answers `/metrics` (Prometheus), " +
			"such as `127.0.0.1:9464`. It serves build counts and durations, " +
			"commit-to-published lag, replica waits. Empty: no listener.",
		Check: func(c Config, bad Bad) {
			if c.Builder.MetricsListen != "" && !strings.Contains(c.Builder.MetricsListen, ":") {
				bad("must be an address such as 127.0.0.1:9464", quoted(c.Builder.MetricsListen))
			}
		},
	},
	{Name: "edge.listen",
		Default: ":8080",
		Doc:     "The address the edge listens on.",
		Check: func(c Config, bad Bad) {
			if c.Edge.Listen == "" {
				bad("must be an address such as :8080", `""`)
			}
		},
	},
	{Name: "edge.shutdown_delay",
		Doc: "How long the edge, told to stop (SIGTERM), goes on serving with " +
			"`/readyz` answering 503 before it stops accepting connections, 0s to " +
			"1m, so that a load balancer or Kubernetes takes it out of rotation " +
			"first. Requests in flight are then finished whatever this is. 0: it " +
			"stops accepting at once. Set it a little above the time the load " +
			"balancer takes to drop an edge, its health-check interval times its " +
			"unhealthy threshold; Kubernetes drops a stopping pod from its Service " +
			"without a probe, and 5s lets that reach every proxy. The delay and the " +
			"time requests in flight take must stay within the pod's " +
			"terminationGracePeriodSeconds (30s by default), past which it is killed.",
		Check: func(c Config, bad Bad) {
			if c.Edge.ShutdownDelay < 0 || c.Edge.ShutdownDelay > MaxShutdownDelay {
				bad("must be between 0s and 1m", c.Edge.ShutdownDelay)
			}
		},
	},
	{Name: "edge.base_path",
		Default: "/api/v2",
		Doc: "The versioned base path every API route sits under, the version " +
			"segment of `{base_url}`. It starts with / and does not end with /.",
		Check: func(c Config, bad Bad) {
			if !strings.HasPrefix(c.Edge.BasePath, "/") || strings.HasSuffix(c.Edge.BasePath, "/") {
				bad("must start with / and not end with /", quoted(c.Edge.BasePath))
			}
		},
	},
	{Name: "edge.public_url",
		Doc: "The URL partners reach the edge at, before `edge.base_path` " +
			"(`https://api.example.com`): the feeds' `next` URLs start with it " +
			"(D37); empty: the scheme and host of each request, with " +
			"`X-Forwarded-Proto` and `X-Forwarded-Host` believed only from " +
			"`edge.trusted_proxies`.",
		Check: func(c Config, bad Bad) { publicURL(c.Edge.PublicURL, bad) },
	},
	{Name: "edge.rate_limit",
		Default: 60,
		Doc: "Accepted requests per token in any rolling 60-second window (D23). " +
			"Failed authentication is limited per client address the same way.",
		Check: func(c Config, bad Bad) {
			if c.Edge.RateLimit <= 0 {
				bad("must be > 0", c.Edge.RateLimit)
			}
		},
	},
	{Name: "edge.poll_interval",
		Default: time.Second,
		Doc: "How often the edge checks the store's pointer for a new snapshot, no " +
			"more often than every 100ms, with a conditional read (`If-None-Match`). An " +
			"unchanged pointer costs the store one GET answered 304 without a body, " +
			"3,600 an hour per edge at 1s. A snapshot built over the one the edge " +
			"serves is loaded from its delta and its changed documents only. A " +
			"published change waits up to this long to be served, and so do its " +
			"webhooks (a delivery waits until the edges serve its snapshot, D42): " +
			"keep it about 1s where changes must show within seconds.",
		Check: func(c Config, bad Bad) {
			if c.Edge.PollInterval < MinPollInterval {
				bad("must be at least 100ms: a shorter interval spends the store's requests and the edge's CPU on polling", c.Edge.PollInterval)
			}
		},
	},
	{Name: "edge.token_refresh",
		Default: 10 * time.Second,
		Doc: "How often the edge reloads the active token hashes, on a connection of " +
			"their own, at most 20s: a revoked token stops working within this " +
			"time. With the reload's query (at most 5 s) and the replica's lag, 20s " +
			"keeps a revocation within 30 s (D22).",
		Check: func(c Config, bad Bad) {
			positive(c.Edge.TokenRefresh, bad)
			if c.Edge.TokenRefresh > MaxTokenRefresh {
				bad("must be at most 20s so that revocation takes effect within 30 s (D22: the refresh, its query of at most 5 s and the replica's lag)", c.Edge.TokenRefresh)
			}
		},
	},
	{Name: "edge.cache_max_age",
		Default: 60 * time.Second,
		Doc: "How long clients may reuse a static document without asking again, at " +
			"most 24h: static responses carry `Cache-Control: private, " +
			"max-age=<seconds>`. 0 makes them revalidate (with ETag) every time. The " +
			"documents change with the catalogue (seats, prices, a class withdrawn), " +
			"and a partner may show its cached copy this long after a change, which " +
			"no one can recall from a private cache.",
		Check: func(c Config, bad Bad) {
			if c.Edge.CacheMaxAge < 0 {
				bad("must not be negative", c.Edge.CacheMaxAge)
			}
			if c.Edge.CacheMaxAge > MaxCacheMaxAge {
				bad("must be at most 24h: a partner may show a cached document this long after it changed, and no one can recall it", c.Edge.CacheMaxAge)
			}
		},
	},
	{Name: "edge.cors_origins",
		Doc: "Origins allowed to call the API from browsers (CORS), comma-separated " +
			"in the environment. Their preflights (`OPTIONS` with `Origin` and " +
			"`Access-Control-Request-Method`) count against the client's address " +
			"like anonymous requests (D44), and any other `OPTIONS` gets 405. Each " +
			"is an origin as browsers send it, `https://shop.example` (no path, not " +
			"even `/`), `*` in a host for any subdomain, or `*` alone for every " +
			"origin. A preflight's answer says `Access-Control-Max-Age: 600`: a " +
			"browser reuses it for up to 10 minutes, sending no new preflight for " +
			"that request meanwhile. Empty allows none.",
		Check: func(c Config, bad Bad) {
			for _, o := range c.Edge.CORSOrigins {
				if !isOrigin(o) {
					bad("must be origins such as https://shop.example (a scheme and a host, no path)", quoted(o))
				}
			}
		}},
	{Name: "edge.cache_dir",
		Shown: "none (the systemd unit and the image set it)",
		Doc: "A folder of this edge's own where it keeps a copy of the last snapshot " +
			"it loaded, to serve it at start when the store is unreachable. Empty: " +
			"no copy. When to set it, and what the systemd unit and the image set " +
			"it to: [OPERATIONS.md](OPERATIONS.md#the-store), under \"An edge " +
			"started while the store is down\"."},
	{Name: "edge.search_timeout",
		Default: 2 * time.Second,
		Doc: "The longest a live class search may run before it is cancelled and the " +
			"client gets 503, less than 29s. The edge's HTTP server cuts off a " +
			"response not written within 30 s (its write timeout), and the client " +
			"gets an empty reply instead of the 503: a second is left to write it.",
		Check: func(c Config, bad Bad) {
			positive(c.Edge.SearchTimeout, bad)
			if c.Edge.SearchTimeout >= MaxSearchTimeout {
				bad(fmt.Sprintf("must be less than %v, so that a search's 503 is written before the edge's write timeout (%v) closes the connection", MaxSearchTimeout, EdgeWriteTimeout), c.Edge.SearchTimeout)
			}
		},
	},
	{Name: "edge.search_cache",
		Default: 5 * time.Second,
		Doc: "How long the edge reuses the response of a live class search for later " +
			"requests with the same parameters (and the same \"today\"), and lets " +
			"concurrent identical searches share one query. A search may therefore " +
			"show the database as it was up to this long ago, while static " +
			"documents follow a change as Freshness in " +
			"[builder/README.md](../builder/README.md#freshness-a-committed-change-is-served-within-seconds) " +
			"says. It is also the `max-age` of search answers (`Cache-Control: " +
			"private, max-age=` its seconds). A response asked for in " +
			"the last fifth of this period is refreshed in the background while it " +
			"is still served, so searches that keep being asked for never wait for " +
			"their query. Errors and 503s are never reused. 0 disables the cache: " +
			"every search queries the replica.",
		Check: func(c Config, bad Bad) {
			if c.Edge.SearchCache < 0 {
				bad("must not be negative (0 disables the cache)", c.Edge.SearchCache)
			}
		},
	},
	{Name: "edge.search_index",
		Default: true,
		Doc: "Whether the edge keeps in memory what the class search matches on " +
			"(public courses and the dates of their public classes), to find a " +
			"search's page and exact total there and read only that page's classes, " +
			"seats included, from the replica. It is used only while the replica's " +
			"`catalogue_search_version` (added by `builder migrate`) shows that " +
			"nothing it holds has changed since it was read, and read again when " +
			"something has; until then, and for a search text other than ASCII, the " +
			"search runs in the replica alone. false: every search runs in the " +
			"replica alone."},
	{Name: "edge.trusted_proxies",
		Doc: "CIDR ranges of the load balancers in front of the edge, " +
			"comma-separated in the environment; when set, the client address is " +
			"read from `X-Forwarded-For`, trusting only these hops. Empty: the " +
			"client address (which limits failed authentication per address) is the " +
			"direct peer and `X-Forwarded-For` is ignored, so it cannot be forged. " +
			"Behind load balancers, list them here, or every client shares the " +
			"balancer's address and one client's bad tokens would block them all.",
		Check: func(c Config, bad Bad) {
			for _, cidr := range c.Edge.TrustedProxies {
				if _, err := netip.ParsePrefix(cidr); err != nil {
					bad("must be CIDR ranges such as 10.0.0.0/8", quoted(cidr))
				}
			}
		},
	},
	{Name: "edge.redis_url",
		Doc: "The Redis that several edges behind one load balancer share their rate " +
			"limits through (`redis://HOST:PORT/DB`, `rediss://` for TLS); empty: " +
			"each edge counts in its own memory, right for a single edge (see " +
			"[OPERATIONS.md](OPERATIONS.md#edges-behind-a-load-balancer)). With it " +
			"a token gets its limit once in all, not once per edge. A password goes " +
			"in the URL as `redis://:PASSWORD@HOST:PORT/DB` or in " +
			"`edge.redis_password`. When Redis does not answer, each edge counts in " +
			"memory until it does.",
		Check: func(c Config, bad Bad) {
			if c.Edge.RedisURL != "" && !validRedisURL(c.Edge.RedisURL) {
				// The URL may hold a password: it is not shown.
				bad("must be redis://[:PASSWORD@]HOST:PORT/DB, or rediss:// for TLS", "a value of another form")
			}
		},
	},
	{Name: "edge.redis_password",
		Doc: "The Redis password when the URL has none. Redacted when the " +
			"configuration is logged; better set as `CATALOGUE_EDGE_REDIS_PASSWORD` " +
			"than in this file."},
	{Name: "edge.redis_timeout",
		Default: 50 * time.Millisecond,
		Doc: "The longest the edge waits for Redis on a request, connecting " +
			"included, between 1ms and 1s; past it the request is counted in " +
			"memory. After three such calls in a row the edge stops asking Redis " +
			"until a probe (every second) finds it answering.",
		Check: func(c Config, bad Bad) {
			if c.Edge.RedisTimeout <= 0 || c.Edge.RedisTimeout > maxRedisTimeout {
				bad("must be between 1ms and 1s: a Redis that hangs costs a request up to this much", c.Edge.RedisTimeout)
			}
		},
	},
	{Name: "edge.metrics_listen",
		Doc: "The address where the edge answers `/metrics` (Prometheus), such as " +
			"`127.0.0.1:9465`, never on `edge.listen`, which the public reaches " +
			"(D26). It serves requests by route and status, latencies, the snapshot " +
			"served, the store's errors; bind it where only the scraper reaches it, " +
			"such as loopback or a private interface. Empty: no metrics listener.",
		Check: func(c Config, bad Bad) { edgeMetricsListen(c.Edge, bad) },
	},
	{Name: "edge.jwt.hmac_secret",
		Doc: "The HS256 secret shared with the provider's sign-in, at least 32 " +
			"bytes; students' JWTs are accepted only when this or " +
			"`edge.jwt.jwks_url` is set (D30). It is what Laravel's usual JWT " +
			"packages sign with by default (`JWT_SECRET`). Redacted when the " +
			"configuration is logged; better set as " +
			"`CATALOGUE_EDGE_JWT_HMAC_SECRET` than in this file.",
		Check: func(c Config, bad Bad) {
			if s := c.Edge.JWT.HMACSecret; s != "" && len(s) < minHMACSecret {
				// The secret itself is never shown, only its length.
				bad(fmt.Sprintf("must be at least %d bytes (RFC 7518: as long as the SHA-256 hash)", minHMACSecret), fmt.Sprintf("%d bytes", len(s)))
			}
		},
	},
	{Name: "edge.jwt.jwks_url",
		Doc: "The JWKS endpoint of an identity provider, for RS256, ES256 and EdDSA " +
			"JWTs: `https://`, or `http://` only to localhost, and so must be any URL " +
			"it redirects to. Fetched at start and " +
			"every 10 minutes, and for a key id it does not hold at most once per " +
			"30 s after the last such fetch completed. Each fetch has its own 5 s " +
			"time-out, shared by the requests waiting for it and never cut short by " +
			"a client that leaves; an address over its allowance of failed " +
			"authentications triggers none. A response over 1 MiB or 100 keys is " +
			"refused; when a fetch fails, the keys fetched last stay in force. Its " +
			"user info and fragment, and query values such as `api_key` or `token`, " +
			"are redacted when it is logged.",
		Check: func(c Config, bad Bad) {
			if c.Edge.JWT.JWKSURL != "" && !validJWKSURL(c.Edge.JWT.JWKSURL) {
				bad("must be an https:// URL (http:// only to localhost)", quoted(RedactURL(c.Edge.JWT.JWKSURL)))
			}
		},
	},
	{Name: "edge.jwt.issuer",
		Doc: "When set, a JWT's `iss` must equal it; empty: not checked."},
	{Name: "edge.jwt.audience",
		Doc: "When set, a JWT's `aud` must be it or a list holding it; empty: not " +
			"checked."},
	{Name: "edge.jwt.leeway",
		Default: 30 * time.Second,
		Doc: "The clock skew allowed when checking `exp` (required), `nbf` and " +
			"`iat`, at most 5m.",
		Check: func(c Config, bad Bad) {
			if c.Edge.JWT.Leeway < 0 || c.Edge.JWT.Leeway > maxLeeway {
				bad("must be between 0s and "+maxLeeway.String(), c.Edge.JWT.Leeway)
			}
		},
	},
	{Name: "edge.jwt.student_claim",
		Default: "sub",
		Doc: "The claim naming the student, `registrations.student_id` (a string or " +
			"an integer); a JWT without it is refused (D31).",
		Check: func(c Config, bad Bad) {
			if strings.TrimSpace(c.Edge.JWT.StudentClaim) == "" {
				bad("must name a claim, such as sub", `""`)
			}
		},
	},
	{Name: "edge.jwt.max_lifetime",
		Default: 24 * time.Hour,
		Doc: "The longest lifetime, `exp` minus `iat`, accepted from a JWT; from one " +
			"without `iat`, the longest time left, `exp` minus now (plus " +
			"`edge.jwt.leeway`). A token meant to live for years is refused.",
		Check: func(c Config, bad Bad) {
			if c.Edge.JWT.MaxLifetime <= 0 {
				bad("must be a positive duration such as 24h", c.Edge.JWT.MaxLifetime)
			}
		},
	},
	{Name: "feeds.retention",
		Default: 168 * time.Hour,
		Doc: "How long a deleted course or class (removed, made non-public, or its " +
			"course made non-public) stays in the feeds as a tombstone, at least " +
			"48h (D36). A partner that reads less often than this must mirror again " +
			"from the start.",
		Check: func(c Config, bad Bad) {
			if c.Feeds.Retention < MinRetention {
				bad("must be at least 48h, so that a partner reading once a day sees every deletion", c.Feeds.Retention)
			}
		},
	},
	{Name: "feeds.license",
		Default: "https://creativecommons.org/licenses/by/4.0/",
		Doc:     "The `license` every feed page names (D35).",
		Check: func(c Config, bad Bad) {
			if u, err := url.Parse(c.Feeds.License); err != nil || u.Scheme == "" || u.Host == "" {
				bad("must be an absolute URL", quoted(c.Feeds.License))
			}
		},
	},
	{Name: "webhooks.allow_http",
		Default: false,
		Doc: "Permit `http://` webhook endpoints (D43); otherwise only `https://` " +
			"ones are accepted, when added and at every delivery. For tests and " +
			"private networks."},
	{Name: "webhooks.allow_private",
		Default: false,
		Doc: "Permit endpoints at private, loopback, link-local and other non-public " +
			"addresses (D43). They are checked when added (every address the name " +
			"resolves to) and at every delivery (the address actually connected to: " +
			"DNS can change). For tests and private networks."},
	{Name: "webhooks.timeout",
		Default: 10 * time.Second,
		Doc: "The longest one delivery may take, connecting included, at most 10s " +
			"(D42); a 2xx within it is success.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.Timeout <= 0 || c.Webhooks.Timeout > MaxWebhookTimeout {
				bad("must be between 1ms and 10s (D42: a 2xx within 10 s is success)", c.Webhooks.Timeout)
			}
		},
	},
	{Name: "webhooks.retry_base",
		Check:   func(c Config, bad Bad) { positiveDuration(c.Webhooks.RetryBase, bad) },
		Default: 5 * time.Second,
		Doc: "The wait before a failed delivery's first retry; each later wait " +
			"doubles up to `webhooks.retry_max`, with jitter."},
	{Name: "webhooks.retry_max",
		Default: time.Hour,
		Doc:     "The longest wait between two retries.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.RetryMax < c.Webhooks.RetryBase {
				bad(fmt.Sprintf("must be at least webhooks.retry_base (%v)", c.Webhooks.RetryBase), c.Webhooks.RetryMax)
			}
		},
	},
	{Name: "webhooks.retry_for",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.RetryFor < MinRetryFor {
				bad("must be at least 24h, the retries D42 promises partners", c.Webhooks.RetryFor)
			}
		},
		Default: 24 * time.Hour,
		Doc: "How long a failed delivery is retried (with the same `webhook-id`) " +
			"before it is given up and the endpoint's next delivery is tried; at " +
			"least 24h (D42)."},
	{Name: "webhooks.disable_after",
		Default: 120 * time.Hour,
		Doc: "An endpoint whose deliveries have all failed for this long, at least " +
			"`webhooks.retry_for`, is disabled (D42). `builder webhook list` shows " +
			"it; `builder webhook enable` turns it back on. An endpoint disabled " +
			"sooner would cut short the retries of its failing delivery.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.DisableAfter <= 0 {
				positiveDuration(c.Webhooks.DisableAfter, bad)
			} else if c.Webhooks.DisableAfter < c.Webhooks.RetryFor {
				bad(fmt.Sprintf("must be at least webhooks.retry_for (%v): an endpoint disabled sooner would cut short the retries D42 promises", c.Webhooks.RetryFor), c.Webhooks.DisableAfter)
			}
		},
	},
	{Name: "webhooks.edge_wait",
		Check:   func(c Config, bad Bad) { positiveDuration(c.Webhooks.EdgeWait, bad) },
		Default: 30 * time.Second,
		Doc: "How long a delivery waits for the edges to serve the snapshot it " +
			"announces before builder serve warns (once per message, and " +
			"`catalogue_builder_webhook_edge_wait_timeouts_total`). It waits on: a " +
			"delivery is never sent before every edge reporting in Redis serves its " +
			"snapshot (D42)."},
	{Name: "webhooks.stuck_after",
		Default: time.Minute,
		Doc: "A delivery job running longer than this, which must exceed " +
			"`webhooks.timeout`, is taken as abandoned by a builder that died, and " +
			"run again by another.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.StuckAfter <= c.Webhooks.Timeout {
				bad(fmt.Sprintf("must be longer than webhooks.timeout (%v): a delivery still running must never be taken as abandoned", c.Webhooks.Timeout), c.Webhooks.StuckAfter)
			}
		},
	},
	{Name: "webhooks.workers",
		Default: 20,
		Doc: "The deliveries one builder makes at once, each to a different " +
			"endpoint; `builder serve` opens up to this many connections to " +
			"`database.url`, and 4 more, for them.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.Workers < 1 {
				bad("must be >= 1", c.Webhooks.Workers)
			}
		},
	},
	{Name: "log.requests",
		Default: true,
		Doc: "Whether the edge logs one line per request (method, route, path, " +
			"status, bytes, duration, request id, client address). false: only the " +
			"other lines."},
}

// sections are the example file's comments above a section rather than a key.
var sections = map[string]string{
	"edge.jwt": "Signed-in students (decisions D30-D33): a portal that has signed a " +
		"student in sends \"Authorization: Bearer <JWT>\" instead of its API token, " +
		"and the class read then fills registration_id and prev_reg_test_date for " +
		"that student. Off unless hmac_secret or jwks_url is set; both may be.",
	"feeds": "The RPDE feeds /public/feeds/courses and /public/feeds/classes " +
		"(decisions D35-D39).",
	"webhooks": "Webhooks (decisions D40-D43): builder serve POSTs a signed " +
		"catalogue.changed (Standard Webhooks) to every enabled endpoint after " +
		"each published snapshot that changed a served document, once the edges " +
		"serve it. Endpoints are managed with builder webhook add, list, remove, " +
		"enable, test and rotate-secret; deliveries are queued in database.url " +
		"(River).",
	"log": "Both binaries log JSON lines on stderr, one object per line (time, " +
		"level, msg, then fields; durations as Go durations such as \"10s\"); each " +
		"long-running command (builder serve, builder run, edge) logs its " +
		"configuration once at start, secrets redacted.",
}

// Default returns the configuration used when nothing else is set: each key's Default.
func Default() Config {
	var c Config
	v := reflect.ValueOf(&c).Elem()
	for _, k := range keys {
		// A default of another type than its field's is left out, for
		// TestKeysAreDeclaredWhole to name.
		if d, f := reflect.ValueOf(k.Default), fieldOf(v, k.Name); k.Default != nil && d.Type() == f.Type() {
			f.Set(d)
		}
	}
	return c
}

// defaults flattens Default into viper keys; every key must be listed so that viper binds its
// environment variable (AutomaticEnv only sees keys it knows).
func defaults() map[string]any {
	v := reflect.ValueOf(Default())
	m := make(map[string]any, len(keys))
	for _, k := range keys {
		m[k.Name] = fieldOf(v, k.Name).Interface()
	}
	return m
}

// Keys lists every configuration key, in the order of their declaration.
func Keys() []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return names
}

// fieldOf returns the field of the Config value v that the dotted key names (matchName);
// it panics when there is none, a mistake in keys that TestKeysAreTheDeclaration explains.
func fieldOf(v reflect.Value, key string) reflect.Value {
	for part := range strings.SplitSeq(key, ".") {
		i := fieldIndex(v.Type(), part)
		if i < 0 {
			panic("config: no field for key " + key)
		}
		v = v.Field(i)
	}
	return v
}

// fieldIndex returns the index of t's field read from the key segment part, or -1.
func fieldIndex(t reflect.Type, part string) int {
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && matchName(part, f.Name) {
			return i
		}
	}
	return -1
}

// matchName reports whether the key segment part (max_shrink) names the Go field (MaxShrink):
// the same letters, ignoring case and underscores, so that a key's name is written once, in
// keys, and not again in a struct tag.
func matchName(part, field string) bool {
	return strings.EqualFold(strings.ReplaceAll(part, "_", ""), field)
}
