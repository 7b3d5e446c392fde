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
	// Meaning is the key table's one Markdown line; Comment is the example file's comment,
	// plain text wrapped at generation, for an operator editing the file.
	Meaning, Comment string
	// Check calls bad for each thing wrong with the key's value in c (other keys' values
	// may bound it); nil: any value of the field's type is right.
	Check func(c Config, bad Bad)
}

// keys declares every configuration key, in the order of the example file and the table:
// the keys of a section together.
var keys = []Key{
	{Name: "database.url",
		Meaning: "the primary; `migrate`, `seed`, `token` write to it; the builder's " +
			"advisory lock lives there",
		Comment: "The provider's primary PostgreSQL. builder migrate, seed and token " +
			"write to it; builder run and serve take their advisory lock on it " +
			"(only one builder publishes at a time). A password here is redacted " +
			"when the configuration is logged; better set it as " +
			"CATALOGUE_DATABASE_URL than here. Every command that touches " +
			"PostgreSQL needs it, in the form " +
			"postgres://catalogue:secret@db.example.internal:5432/provider?sslmode=require.",
		Check: func(c Config, bad Bad) { postgresURL(c.Database.URL, bad) },
	},
	{Name: "replica.url",
		Shown: "database.url",
		Meaning: "the read replica: the builder reads it, the edge searches it and " +
			"loads token hashes from it",
		Comment: "The read replica the builder reads the catalogue from and the edge " +
			"searches live. Empty means database.url.",
		Check: func(c Config, bad Bad) { postgresURL(c.Replica.URL, bad) },
	},
	{Name: "store.url",
		Default: "file://./data/catalogue",
		Meaning: "`file://PATH` (local folder, no server) or `s3://BUCKET/PREFIX`",
		Comment: "Where snapshots are published: file://PATH (a local folder, needs no " +
			"server) or s3://BUCKET/PREFIX (S3 or any S3-compatible service such " +
			"as MinIO). The builder creates the folder or bucket when it does not " +
			"exist yet. S3 credentials come from the usual AWS sources " +
			"(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profiles, instance " +
			"roles), never from this file.",
		Check: func(c Config, bad Bad) {
			if err := validateStoreURL(c.Store.URL); err != nil {
				bad(err.Error(), quoted(c.Store.URL))
			}
		},
	},
	{Name: "store.endpoint",
		Meaning: "S3-compatible endpoint such as MinIO; path-style addressing when set",
		Comment: "The endpoint of an S3-compatible service, such as " +
			"http://127.0.0.1:9000 for MinIO; when set, requests use path-style " +
			"addressing. Empty means AWS S3.",
		Check: func(c Config, bad Bad) {
			if u, err := url.Parse(c.Store.Endpoint); c.Store.Endpoint != "" && (err != nil || u.Scheme == "" || u.Host == "") {
				bad("must be a URL such as http://127.0.0.1:9000", quoted(c.Store.Endpoint))
			}
		},
	},
	{Name: "store.region",
		Default: "us-east-1",
		Meaning: "S3 region",
		Comment: "The S3 region."},
	{Name: "timezone",
		Default: "UTC",
		Meaning: "IANA zone that defines \"today\" (D1) for builder and edge alike",
		Comment: "The IANA time zone that defines \"today\" (decision D1): which classes " +
			"are upcoming, which have started. Builder and edge must agree.",
		Check: func(c Config, bad Bad) {
			if _, err := time.LoadLocation(c.Timezone); err != nil || c.Timezone == "" {
				bad("must be an IANA time zone such as UTC or Europe/Berlin", quoted(c.Timezone))
			}
		},
	},
	{Name: "templates.dir",
		Meaning: "folder of SQL files replacing the embedded templates of the same " +
			"name: your `mapping.sql` " +
			"([templates/README.md](../templates/README.md)); an unknown name, or " +
			"one always embedded, is refused",
		Comment: "A folder of SQL files that replace the embedded templates of the " +
			"same name, for a provider whose schema differs from the reference " +
			"schema: mapping.sql, which maps it to the views the catalogue reads " +
			"(see templates/README.md), and, rarely, the reads (courses.sql, " +
			"classes.sql, search.sql, ...). A file with an unknown name, or " +
			"naming a template that is always embedded, is refused. Empty means " +
			"the embedded templates only."},
	{Name: "builder.schedule",
		Default: "*/5 * * * *",
		Meaning: "cron spec of `builder serve`",
		Comment: "When builder serve builds, as a cron spec in the configured time " +
			"zone: five fields (minute hour day-of-month month day-of-week) or a " +
			"descriptor such as @hourly or \"@every 10m\". serve also builds once " +
			"at start. A build still running when the next is due makes that one " +
			"skip.",
		Check: func(c Config, bad Bad) {
			if _, err := cron.ParseStandard(c.Builder.Schedule); err != nil {
				bad("must be a cron spec such as */5 * * * *", quoted(c.Builder.Schedule))
			}
		},
	},
	{Name: "builder.keep",
		Default: 10,
		Meaning: "snapshots kept in all for rollback: the current one and the " +
			"`builder.keep` - 1 most recently current before it (`current.json` " +
			"lists them); a build stopped before its pointer is never kept",
		Comment: "How many snapshots are kept in all, the current one included: it and " +
			"the keep - 1 that were current most recently before it (builder " +
			"rollback can return to those). Older snapshots and the objects only " +
			"they use are deleted after each publication. At least 1.",
		Check: func(c Config, bad Bad) {
			if c.Builder.Keep < 1 {
				bad("must be >= 1", c.Builder.Keep)
			}
		},
	},
	{Name: "builder.max_shrink",
		Default: 0.5,
		Meaning: "publish guard: refuse a build whose course or class count falls by " +
			"more than this fraction, unless `--force`",
		Comment: "The publish guard: a build whose public course or class count falls " +
			"by more than this fraction (0 to 1) against the current snapshot is " +
			"refused unless run with --force. 0 refuses any fall; 1 never " +
			"refuses.",
		Check: func(c Config, bad Bad) {
			if c.Builder.MaxShrink < 0 || c.Builder.MaxShrink > 1 {
				bad("must be between 0 and 1", c.Builder.MaxShrink)
			}
		},
	},
	{Name: "builder.collect_grace",
		Default: time.Hour,
		Meaning: "a snapshot the pointer does not keep (a build still publishing or " +
			"stopped before its pointer, one past `builder.keep`) stays in the " +
			"store with its objects until its build started this long ago; it " +
			"must exceed the longest publication",
		Comment: "How long a snapshot that the pointer does not keep (a build still " +
			"publishing, one that stopped before its pointer, one past keep) " +
			"stays in the store, with its objects, after its build started. It " +
			"must exceed the longest publication: a builder that lost its lock " +
			"without knowing it may still be storing objects that this snapshot " +
			"names.",
		Check: func(c Config, bad Bad) {
			if c.Builder.CollectGrace <= 0 {
				bad("must be > 0", c.Builder.CollectGrace)
			}
		},
	},
	{Name: "builder.listen",
		Default: true,
		Meaning: "freshness " +
			"([builder/README.md](../builder/README.md#freshness-a-committed-change-is-served-within-seconds)): " +
			"`builder serve` listens on `database.url` for changes and publishes " +
			"each within seconds; `builder migrate` installs the triggers that " +
			"send them (off: removes them)",
		Comment: "Freshness: builder serve LISTENs on database.url (the primary: a " +
			"standby delivers no notifications) for the notifications of the " +
			"triggers that builder migrate installs, and publishes each committed " +
			"change within seconds, re-rendering only the documents it affects; " +
			"the schedule above stays as the safety net. Off: builds run on the " +
			"schedule only, and builder migrate removes the triggers (so the " +
			"primary's writes pay nothing)."},
	{Name: "builder.debounce",
		Default: 100 * time.Millisecond,
		Meaning: "a change's build starts once no other change has come for this long…",
		Comment: "The quiet period after a change before its build starts: a burst of " +
			"changes closer together than this makes one build.",
		Check: func(c Config, bad Bad) {
			if c.Builder.Debounce < 0 {
				bad("must not be negative", c.Builder.Debounce)
			}
		},
	},
	{Name: "builder.max_delay",
		Default: time.Second,
		Meaning: "…or this long after the first change it answers, whichever is first " +
			"(at least `builder.debounce`)",
		Comment: "The longest a change waits for its build while more changes keep " +
			"coming (at least debounce).",
		Check: func(c Config, bad Bad) {
			if c.Builder.MaxDelay < c.Builder.Debounce {
				bad(fmt.Sprintf("must be at least builder.debounce (%v)", c.Builder.Debounce), c.Builder.MaxDelay)
			}
		},
	},
	{Name: "builder.replica_wait",
		Default: 10 * time.Second,
		Meaning: "the longest a change's build waits for `replica.url` to replay the " +
			"change before it reads anyway",
		Comment: "A build told of a change waits until the replica (replica.url) has " +
			"replayed the primary's log past that change, at most this long; then " +
			"it reads anyway (and the change is published by a later build).",
		Check: func(c Config, bad Bad) {
			if c.Builder.ReplicaWait <= 0 {
				bad("must be a positive duration such as 10s", c.Builder.ReplicaWait)
			}
		},
	},
	{Name: "builder.metrics_listen",
		Meaning: "address where `builder serve` answers `/metrics` (Prometheus), e.g. " +
			"`127.0.0.1:9464`",
		Comment: "The address where builder serve answers /metrics (Prometheus): build " +
			"counts and durations, commit-to-published lag, replica waits. Empty: " +
			"no listener.",
		Check: func(c Config, bad Bad) {
			if c.Builder.MetricsListen != "" && !strings.Contains(c.Builder.MetricsListen, ":") {
				bad("must be an address such as 127.0.0.1:9464", quoted(c.Builder.MetricsListen))
			}
		},
	},
	{Name: "edge.listen",
		Default: ":8080",
		Meaning: "address the edge listens on",
		Comment: "The address the edge listens on.",
		Check: func(c Config, bad Bad) {
			if c.Edge.Listen == "" {
				bad("must be an address such as :8080", `""`)
			}
		},
	},
	{Name: "edge.base_path",
		Default: "/api/v2",
		Meaning: "the version segment of `{base_url}`",
		Comment: "The versioned base path every API route sits under; starts with / " +
			"and does not end with /.",
		Check: func(c Config, bad Bad) {
			if !strings.HasPrefix(c.Edge.BasePath, "/") || strings.HasSuffix(c.Edge.BasePath, "/") {
				bad("must start with / and not end with /", quoted(c.Edge.BasePath))
			}
		},
	},
	{Name: "edge.public_url",
		Meaning: "the URL partners reach the edge at, before `edge.base_path` " +
			"(`https://api.example.com`): the feeds' `next` URLs start with it; " +
			"none: the request's scheme and host (`X-Forwarded-Proto`/`-Host` " +
			"only from `edge.trusted_proxies`) (D37)",
		Comment: "The URL partners reach the edge at, before base_path " +
			"(https://api.example.com): the feeds' next URLs start with it. " +
			"Empty: the scheme and host of each request, with X-Forwarded-Proto " +
			"and X-Forwarded-Host believed only from trusted_proxies.",
		Check: func(c Config, bad Bad) { publicURL(c.Edge.PublicURL, bad) },
	},
	{Name: "edge.rate_limit",
		Default: 60,
		Meaning: "accepted requests per token in any rolling minute (D23)",
		Comment: "Accepted requests per token in any rolling 60-second window " +
			"(decision D23); failed authentication is limited per client address " +
			"the same way.",
		Check: func(c Config, bad Bad) {
			if c.Edge.RateLimit <= 0 {
				bad("must be > 0", c.Edge.RateLimit)
			}
		},
	},
	{Name: "edge.poll_interval",
		Check:   func(c Config, bad Bad) { positive(c.Edge.PollInterval, bad) },
		Default: time.Second,
		Meaning: "how often the store's pointer is checked, with a conditional GET (an " +
			"unchanged pointer is a bodiless 304)",
		Comment: "How often the edge checks the store's pointer for a new snapshot. " +
			"The check is a conditional read (If-None-Match): an unchanged " +
			"pointer costs the store one GET answered 304 without a body, 3,600 " +
			"an hour per edge at 1s. A snapshot built over the one the edge " +
			"serves is loaded from its delta and its changed documents only."},
	{Name: "edge.token_refresh",
		Default: 10 * time.Second,
		Meaning: "how often token hashes are reloaded, on a connection of their own " +
			"(at most 20s: with the reload's 5 s query timeout and replication " +
			"lag a revocation takes effect within D22's 30 s)",
		Comment: "How often the edge reloads the active token hashes; a revoked token " +
			"stops working within this time. At most 20s, so that with the " +
			"reload's query (at most 5 s) and the replica's lag a revoked token " +
			"stops working within 30 s (decision D22).",
		Check: func(c Config, bad Bad) {
			positive(c.Edge.TokenRefresh, bad)
			if c.Edge.TokenRefresh > MaxTokenRefresh {
				bad("must be at most 20s so that revocation takes effect within 30 s (D22: the refresh, its query of at most 5 s and the replica's lag)", c.Edge.TokenRefresh)
			}
		},
	},
	{Name: "edge.cache_max_age",
		Default: 60 * time.Second,
		Meaning: "`Cache-Control: private, max-age` of static reads",
		Comment: "How long clients may reuse a static document without asking again: " +
			"static responses carry Cache-Control \"private, max-age=<seconds>\"; 0 " +
			"makes them revalidate (with ETag) every time.",
		Check: func(c Config, bad Bad) {
			if c.Edge.CacheMaxAge < 0 {
				bad("must not be negative", c.Edge.CacheMaxAge)
			}
		},
	},
	{Name: "edge.cors_origins",
		Meaning: "origins allowed to call from a browser (comma-separated in the " +
			"environment); their preflights (`OPTIONS` with `Origin` and " +
			"`Access-Control-Request-Method`) count against the client's address " +
			"like anonymous requests (D44), and any other `OPTIONS` gets 405",
		Comment: "Origins allowed to call the API from browsers (CORS). Empty allows " +
			"none. As an environment variable, a comma-separated list."},
	{Name: "edge.cache_dir",
		Shown: "none (the systemd unit and the image set it)",
		Meaning: "folder of this edge's own where it keeps the last snapshot it " +
			"loaded, to start from it when the store is down; without it an edge " +
			"started during a store outage answers 503 until the store is back, " +
			"and says so in a warning at start",
		Comment: "A folder where the edge keeps a copy of the last snapshot it loaded, " +
			"so that it can serve it at start when the store is unreachable; " +
			"without one, an edge started during a store outage answers 503 until " +
			"the store is back (it logs a warning at start). Set it in " +
			"production, to a folder of this edge's own: the systemd unit sets it " +
			"to its CacheDirectory, the image to its volume /var/cache/catalogue. " +
			"The bare binary has no place it may assume writable (its working " +
			"directory may be read-only), so the default is none."},
	{Name: "edge.search_timeout",
		Check:   func(c Config, bad Bad) { positive(c.Edge.SearchTimeout, bad) },
		Default: 2 * time.Second,
		Meaning: "deadline of one live search; past it the client gets 503",
		Comment: "The longest a live class search may run before it is cancelled."},
	{Name: "edge.search_cache",
		Default: 5 * time.Second,
		Meaning: "how long the edge reuses a live search's response for the same " +
			"parameters (and concurrent identical searches share one query): a " +
			"search may show data up to this old (static documents follow a " +
			"change within about a second with `builder.listen`, within " +
			"`builder.schedule` without it); a response asked for in its last " +
			"fifth is refreshed in the background while still served; errors are " +
			"never reused; 0 disables it. Also the `max-age` of search answers " +
			"(`Cache-Control: private, max-age=5`)",
		Comment: "How long the edge reuses the response of a live class search for " +
			"later requests with the same parameters (and the same \"today\"), and " +
			"lets concurrent identical searches share one query. A search may " +
			"therefore show the database as it was up to this long ago (static " +
			"documents follow a change within about a second with builder.listen, " +
			"within builder.schedule without it). A response asked for in the " +
			"last fifth of this period is refreshed in the background while it is " +
			"still served, so searches that keep being asked for never wait for " +
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
		Meaning: "keep what the class search matches on (public courses, the dates of " +
			"their public classes) in memory, find a search's page and exact " +
			"total there and read only that page's classes, seats included, from " +
			"the replica; used only while the replica's " +
			"`catalogue_search_version` (added by `builder migrate`) shows " +
			"nothing it holds has changed, and read again when something has; " +
			"until then, and for a search text that is not ASCII, the search runs " +
			"in the replica alone; false: always in the replica alone",
		Comment: "Whether the edge keeps in memory what the class search matches on " +
			"(public courses and the dates of their public classes), to find a " +
			"search's page and exact total there and read only that page's " +
			"classes, seats included, from the replica. It is used only while the " +
			"replica's catalogue_search_version (added by builder migrate) shows " +
			"that nothing it holds has changed since it was read, and read again " +
			"when something has; until then, and for a search text other than " +
			"ASCII, the search runs in the replica alone. false: every search " +
			"runs in the replica alone."},
	{Name: "edge.trusted_proxies",
		Meaning: "CIDR ranges of load balancers; when set, the client address is read " +
			"from `X-Forwarded-For` through them only (comma-separated in the " +
			"environment)",
		Comment: "CIDR ranges of the load balancers in front of the edge. Empty: the " +
			"client address (which limits failed authentication per address) is " +
			"the direct peer and X-Forwarded-For is ignored, so it cannot be " +
			"forged. Behind load balancers, list them here, or every client " +
			"shares the balancer's address and one client's bad tokens would " +
			"block them all; the address is then read from X-Forwarded-For, " +
			"trusting only these hops. As an environment variable, a " +
			"comma-separated list.",
		Check: func(c Config, bad Bad) {
			for _, cidr := range c.Edge.TrustedProxies {
				if _, err := netip.ParsePrefix(cidr); err != nil {
					bad("must be CIDR ranges such as 10.0.0.0/8", quoted(cidr))
				}
			}
		},
	},
	{Name: "edge.redis_url",
		Meaning: "the Redis several edges share their rate limits through " +
			"(`redis://HOST:PORT/DB`, `rediss://` for TLS); none: each edge " +
			"counts in memory (see " +
			"[OPERATIONS.md](OPERATIONS.md#edges-behind-a-load-balancer))",
		Comment: "The Redis that several edges behind one load balancer share their " +
			"rate limits through, so that a token gets its limit once in all, not " +
			"once per edge: redis://HOST:PORT/DB, rediss:// for TLS, a password " +
			"as redis://:PASSWORD@HOST:PORT/DB or in redis_password. Empty: each " +
			"edge counts in its own memory (right for a single edge). When Redis " +
			"does not answer, each edge counts in memory until it does.",
		Check: func(c Config, bad Bad) {
			if c.Edge.RedisURL != "" && !validRedisURL(c.Edge.RedisURL) {
				// The URL may hold a password: it is not shown.
				bad("must be redis://[:PASSWORD@]HOST:PORT/DB, or rediss:// for TLS", "a value of another form")
			}
		},
	},
	{Name: "edge.redis_password",
		Meaning: "Redis's password when the URL has none",
		Comment: "The Redis password when the URL has none. Redacted when the " +
			"configuration is logged; better set as CATALOGUE_EDGE_REDIS_PASSWORD " +
			"than in this file."},
	{Name: "edge.redis_timeout",
		Default: 50 * time.Millisecond,
		Meaning: "the longest a request waits for Redis; past it the edge counts in " +
			"memory until Redis answers again (at most 1s)",
		Comment: "The longest the edge waits for Redis on a request (connecting " +
			"included); past it the request is counted in memory and the edge " +
			"stops asking Redis until a probe (every second) finds it answering. " +
			"Between 1ms and 1s.",
		Check: func(c Config, bad Bad) {
			if c.Edge.RedisTimeout <= 0 || c.Edge.RedisTimeout > maxRedisTimeout {
				bad("must be between 1ms and 1s: a Redis that hangs costs a request up to this much", c.Edge.RedisTimeout)
			}
		},
	},
	{Name: "edge.metrics_listen",
		Meaning: "address where the edge answers `/metrics` (Prometheus), e.g. " +
			"`127.0.0.1:9465`: never on `edge.listen`, which the public reaches " +
			"(D26); none: no metrics listener",
		Comment: "The address where the edge answers /metrics (Prometheus): requests " +
			"by route and status, latencies, the snapshot served, the store's " +
			"errors. Never on listen, which the public reaches (decision D26): " +
			"bind it where only the scraper reaches it, such as 127.0.0.1:9465 or " +
			"a private interface. Empty: no metrics listener.",
		Check: func(c Config, bad Bad) { edgeMetricsListen(c.Edge, bad) },
	},
	{Name: "edge.jwt.hmac_secret",
		Meaning: "the HS256 secret shared with the provider's sign-in, at least 32 " +
			"bytes (redacted in the logged configuration); students' JWTs are " +
			"accepted only when this or `edge.jwt.jwks_url` is set (D30)",
		Comment: "The shared secret HS256 tokens are signed with (what Laravel's usual " +
			"JWT packages issue by default: JWT_SECRET). At least 32 bytes. " +
			"Redacted when the configuration is logged; better set as " +
			"CATALOGUE_EDGE_JWT_HMAC_SECRET than in this file.",
		Check: func(c Config, bad Bad) {
			if s := c.Edge.JWT.HMACSecret; s != "" && len(s) < minHMACSecret {
				// The secret itself is never shown, only its length.
				bad(fmt.Sprintf("must be at least %d bytes (RFC 7518: as long as the SHA-256 hash)", minHMACSecret), fmt.Sprintf("%d bytes", len(s)))
			}
		},
	},
	{Name: "edge.jwt.jwks_url",
		Meaning: "an identity provider's JWKS endpoint for RS256, ES256 and EdDSA JWTs " +
			"(`https://`, or `http://` to localhost): fetched at start and every " +
			"10 minutes, and for a key id it does not hold at most once per 30 s " +
			"after the last such fetch completed (each fetch on its own 5 s " +
			"time-out, shared by the requests waiting for it, never cut short by " +
			"a client that leaves; an address over its allowance of failed " +
			"authentications triggers none); a response over 1 MiB or 100 keys is " +
			"refused; the keys fetched last stay in force when a fetch fails",
		Comment: "The JWKS endpoint of an identity provider, for RS256, ES256 and " +
			"EdDSA tokens: https:// (http:// only to localhost). Fetched at start " +
			"and every 10 minutes, and again (at most every 30 s) when a token " +
			"names a key id it does not hold; when a fetch fails, the keys " +
			"fetched last stay in force.",
		Check: func(c Config, bad Bad) {
			if c.Edge.JWT.JWKSURL != "" && !validJWKSURL(c.Edge.JWT.JWKSURL) {
				bad("must be an https:// URL (http:// only to localhost)", quoted(c.Edge.JWT.JWKSURL))
			}
		},
	},
	{Name: "edge.jwt.issuer",
		Meaning: "when set, a JWT's `iss` must equal it",
		Comment: "When set, a token's iss must equal it; empty: not checked."},
	{Name: "edge.jwt.audience",
		Meaning: "when set, a JWT's `aud` must be it or a list holding it",
		Comment: "When set, a token's aud must be it or a list holding it; empty: not " +
			"checked."},
	{Name: "edge.jwt.leeway",
		Default: 30 * time.Second,
		Meaning: "the clock skew allowed on `exp` (required), `nbf` and `iat`; at most " +
			"5m",
		Comment: "Clock skew allowed when checking exp (required), nbf and iat. At " +
			"most 5m.",
		Check: func(c Config, bad Bad) {
			if c.Edge.JWT.Leeway < 0 || c.Edge.JWT.Leeway > maxLeeway {
				bad("must be between 0s and "+maxLeeway.String(), c.Edge.JWT.Leeway)
			}
		},
	},
	{Name: "edge.jwt.student_claim",
		Default: "sub",
		Meaning: "the claim naming the student, `registrations.student_id` (a string " +
			"or an integer); a JWT without it is refused (D31)",
		Comment: "The claim naming the student: registrations.student_id, a string or " +
			"an integer. A token without it is refused.",
		Check: func(c Config, bad Bad) {
			if strings.TrimSpace(c.Edge.JWT.StudentClaim) == "" {
				bad("must name a claim, such as sub", `""`)
			}
		},
	},
	{Name: "edge.jwt.max_lifetime",
		Default: 24 * time.Hour,
		Meaning: "the longest lifetime, `exp` minus `iat`, accepted from a JWT that " +
			"has `iat` (one without `iat` is not checked for it)",
		Comment: "The longest lifetime accepted, exp minus iat, from a token that has " +
			"iat (one without iat is not checked for it): a token meant to live " +
			"for years is refused.",
		Check: func(c Config, bad Bad) {
			if c.Edge.JWT.MaxLifetime <= 0 {
				bad("must be a positive duration such as 24h", c.Edge.JWT.MaxLifetime)
			}
		},
	},
	{Name: "feeds.retention",
		Default: 168 * time.Hour,
		Meaning: "how long a deleted course or class stays in the feeds as a " +
			"tombstone, at least 48h (D36)",
		Comment: "How long a deleted course or class (removed, made non-public, or its " +
			"course made non-public) stays in the feeds as a tombstone; at least " +
			"48h. A partner that reads less often than this must mirror again " +
			"from the start.",
		Check: func(c Config, bad Bad) {
			if c.Feeds.Retention < MinRetention {
				bad("must be at least 48h, so that a partner reading once a day sees every deletion", c.Feeds.Retention)
			}
		},
	},
	{Name: "feeds.license",
		Default: "https://creativecommons.org/licenses/by/4.0/",
		Meaning: "the `license` of every feed page (D35)",
		Comment: "The license every feed page names.",
		Check: func(c Config, bad Bad) {
			if u, err := url.Parse(c.Feeds.License); err != nil || u.Scheme == "" || u.Host == "" {
				bad("must be an absolute URL", quoted(c.Feeds.License))
			}
		},
	},
	{Name: "webhooks.allow_http",
		Default: false,
		Meaning: "permit `http://` webhook endpoints (D43); otherwise `https://` only, " +
			"when added and at every delivery",
		Comment: "Permit http:// endpoints; otherwise only https:// ones are accepted, " +
			"when added and at every delivery. For tests and private networks."},
	{Name: "webhooks.allow_private",
		Default: false,
		Meaning: "permit endpoints at private, loopback, link-local and other " +
			"non-public addresses (D43), checked when added (every address the " +
			"name resolves to) and at every delivery (the address connected to)",
		Comment: "Permit endpoints at private, loopback, link-local and other " +
			"non-public addresses; checked when added and at every delivery, on " +
			"the address actually connected to (DNS can change). For tests and " +
			"private networks."},
	{Name: "webhooks.timeout",
		Default: 10 * time.Second,
		Meaning: "the longest one delivery takes, connecting included; a 2xx within it " +
			"is success (D42; at most 10s)",
		Comment: "The longest one delivery may take, connecting included; a 2xx within " +
			"it is success. At most 10s (D42).",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.Timeout <= 0 || c.Webhooks.Timeout > MaxWebhookTimeout {
				bad("must be between 1ms and 10s (D42: a 2xx within 10 s is success)", c.Webhooks.Timeout)
			}
		},
	},
	{Name: "webhooks.retry_base",
		Check:   func(c Config, bad Bad) { positiveDuration(c.Webhooks.RetryBase, bad) },
		Default: 5 * time.Second,
		Meaning: "the wait before a failed delivery's first retry; each later one " +
			"doubles, with jitter, up to webhooks.retry_max",
		Comment: "The wait before a failed delivery's first retry; each later wait " +
			"doubles up to retry_max, with jitter."},
	{Name: "webhooks.retry_max",
		Default: time.Hour,
		Meaning: "the longest wait between two retries",
		Comment: "The longest wait between two retries.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.RetryMax < c.Webhooks.RetryBase {
				bad(fmt.Sprintf("must be at least webhooks.retry_base (%v)", c.Webhooks.RetryBase), c.Webhooks.RetryMax)
			}
		},
	},
	{Name: "webhooks.retry_for",
		Check:   func(c Config, bad Bad) { positiveDuration(c.Webhooks.RetryFor, bad) },
		Default: 24 * time.Hour,
		Meaning: "how long a failed delivery is retried, with the same `webhook-id`, " +
			"before it is given up and the endpoint's next one is tried",
		Comment: "How long a failed delivery is retried (with the same webhook-id) " +
			"before it is given up and the endpoint's next delivery is tried."},
	{Name: "webhooks.disable_after",
		Check:   func(c Config, bad Bad) { positiveDuration(c.Webhooks.DisableAfter, bad) },
		Default: 120 * time.Hour,
		Meaning: "an endpoint whose deliveries have all failed this long is disabled " +
			"(D42)",
		Comment: "An endpoint whose deliveries have all failed for this long is " +
			"disabled (builder webhook list shows it; builder webhook enable " +
			"turns it back on)."},
	{Name: "webhooks.edge_wait",
		Check:   func(c Config, bad Bad) { positiveDuration(c.Webhooks.EdgeWait, bad) },
		Default: 30 * time.Second,
		Meaning: "the longest a delivery waits for the edges to serve its snapshot " +
			"(D42); past it it is sent with a warning",
		Comment: "The longest a delivery waits for the edges to serve the snapshot it " +
			"announces (D42); past it, it is sent anyway and a warning is logged."},
	{Name: "webhooks.stuck_after",
		Default: time.Minute,
		Meaning: "a delivery job running this long is taken as abandoned by a builder " +
			"that died, and run again (longer than webhooks.timeout)",
		Comment: "A delivery job running longer than this is taken as abandoned by a " +
			"builder that died and run again by another; longer than timeout.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.StuckAfter <= c.Webhooks.Timeout {
				bad(fmt.Sprintf("must be longer than webhooks.timeout (%v): a delivery still running must never be taken as abandoned", c.Webhooks.Timeout), c.Webhooks.StuckAfter)
			}
		},
	},
	{Name: "webhooks.workers",
		Default: 20,
		Meaning: "deliveries one builder makes at once, each to a different endpoint; " +
			"`builder serve` opens this many connections to database.url, and 4 " +
			"more, for them",
		Comment: "The deliveries one builder makes at once, each to a different " +
			"endpoint; builder serve opens up to this many connections to " +
			"database.url, and 4 more, for them.",
		Check: func(c Config, bad Bad) {
			if c.Webhooks.Workers < 1 {
				bad("must be >= 1", c.Webhooks.Workers)
			}
		},
	},
	{Name: "log.requests",
		Default: true,
		Meaning: "the edge logs one line per request (method, route, path, status, " +
			"bytes, duration, request id, client address); false: only the other " +
			"lines",
		Comment: "Whether the edge logs one line per request (method, route, path, " +
			"status, bytes, duration, request id, client address). false: only " +
			"the other lines."},
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
