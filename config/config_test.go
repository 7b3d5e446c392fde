package config

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/robfig/cron/v3"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalogue.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDefaults(t *testing.T) {
	got, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Store:    Store{URL: "file://./data/catalogue", Region: "us-east-1"},
		Timezone: "UTC",
		Builder: Builder{Schedule: "*/5 * * * *", Keep: 10, MaxShrink: 0.5, CollectGrace: time.Hour, Listen: true,
			Debounce: 100 * time.Millisecond, MaxDelay: time.Second, ReplicaWait: 10 * time.Second},
		Edge: Edge{Listen: ":8080", BasePath: "/api/v2", RateLimit: 60, PollInterval: time.Second,
			TokenRefresh: 10 * time.Second, CacheMaxAge: 60 * time.Second, SearchTimeout: 2 * time.Second,
			SearchCache: 5 * time.Second, SearchIndex: true, RedisTimeout: 50 * time.Millisecond, JWT: JWT{Leeway: 30 * time.Second, StudentClaim: "sub", MaxLifetime: 24 * time.Hour}},
		// D36: tombstones kept 168h; D35: the license of every feed page.
		Feeds: Feeds{Retention: 168 * time.Hour, License: "https://creativecommons.org/licenses/by/4.0/"},
		// D42: 10 s for a 2xx, retried for 24 h; D43: https and public addresses only.
		Webhooks: Webhooks{Timeout: 10 * time.Second, RetryBase: 5 * time.Second, RetryMax: time.Hour,
			RetryFor: 24 * time.Hour, DisableAfter: 120 * time.Hour, EdgeWait: 30 * time.Second,
			StuckAfter: time.Minute, Workers: 20},
		Log: Log{Requests: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load defaults mismatch (-want +got):\n%s", diff)
	}
}

// The layers: file over defaults, environment over file, flags over environment.
func TestLoadLayers(t *testing.T) {
	path := writeFile(t, `
database:
  url: postgres://file@h/db
store:
  url: s3://bucket/file
edge:
  rate_limit: 10
  poll_interval: 2s
  cors_origins: [https://a.example]
timezone: Europe/Berlin
`)
	t.Setenv("CATALOGUE_EDGE_RATE_LIMIT", "20")
	t.Setenv("CATALOGUE_STORE_URL", "s3://bucket/env")
	t.Setenv("CATALOGUE_EDGE_CORS_ORIGINS", "https://b.example,https://c.example")
	t.Setenv("CATALOGUE_EDGE_SEARCH_CACHE", "0")
	t.Setenv("CATALOGUE_EDGE_SEARCH_INDEX", "false")
	t.Setenv("CATALOGUE_EDGE_SHUTDOWN_DELAY", "5s")
	got, err := Load(path, map[string]any{"store.url": "file:///flag"})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"database.url (file)", got.Database.URL, "postgres://file@h/db"},
		{"edge.poll_interval (file)", got.Edge.PollInterval, 2 * time.Second},
		{"timezone (file)", got.Timezone, "Europe/Berlin"},
		{"edge.rate_limit (env over file)", got.Edge.RateLimit, 20},
		{"store.url (flag over env)", got.Store.URL, "file:///flag"},
		{"edge.cors_origins (env list)", got.Edge.CORSOrigins, []string{"https://b.example", "https://c.example"}},
		{"edge.search_cache (env 0: off)", got.Edge.SearchCache, time.Duration(0)},
		{"edge.search_index (env false: off)", got.Edge.SearchIndex, false},
		{"edge.shutdown_delay (env)", got.Edge.ShutdownDelay, 5 * time.Second},
		{"replica url falls back to database.url", got.ReplicaURL(), "postgres://file@h/db"},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	tests := []struct {
		env, val, want string
	}{
		{"CATALOGUE_EDGE_RATE_LIMIT", "0", "edge.rate_limit: must be > 0 (got 0)"},
		{"CATALOGUE_TIMEZONE", "Mars/Olympus", `timezone: must be an IANA time zone`},
		{"CATALOGUE_STORE_URL", "ftp://x", `store.url: must be file://PATH or s3://BUCKET/PREFIX (got "ftp://x")`},
		{"CATALOGUE_STORE_URL", "s3://", `store.url: must be file://PATH or s3://BUCKET/PREFIX`},
		{"CATALOGUE_STORE_ENDPOINT", "minio:9000", `store.endpoint: must be a URL`},
		{"CATALOGUE_DATABASE_URL", "mysql://x", "database.url: must be a postgres:// URL"},
		{"CATALOGUE_BUILDER_SCHEDULE", "every now and then", "builder.schedule: must be a cron spec"},
		// "@every 0s" made a full build every second (cron runs it every 1s at least).
		{"CATALOGUE_BUILDER_SCHEDULE", "@every 0s", `builder.schedule: must leave at least a minute between builds, each a full build (this one leaves 1s) (got "@every 0s")`},
		{"CATALOGUE_BUILDER_SCHEDULE", "@every 59s", "builder.schedule: must leave at least a minute between builds, each a full build (this one leaves 59s)"},
		{"CATALOGUE_BUILDER_SCHEDULE", "@every 1m", ""},
		{"CATALOGUE_BUILDER_SCHEDULE", "* * * * *", ""},
		{"CATALOGUE_BUILDER_SCHEDULE", "0,1 * * * *", ""},
		{"CATALOGUE_BUILDER_SCHEDULE", "@hourly", ""},
		{"CATALOGUE_BUILDER_KEEP", "0", "builder.keep: must be >= 1 (got 0)"},
		{"CATALOGUE_BUILDER_MAX_SHRINK", "1.5", "builder.max_shrink: must be between 0 and 1 (got 1.5)"},
		{"CATALOGUE_BUILDER_COLLECT_GRACE", "0s", "builder.collect_grace: must be > 0 (got 0s)"},
		{"CATALOGUE_BUILDER_DEBOUNCE", "-1ms", "builder.debounce: must not be negative (got -1ms)"},
		{"CATALOGUE_BUILDER_MAX_DELAY", "50ms", "builder.max_delay: must be at least builder.debounce (100ms) (got 50ms)"},
		{"CATALOGUE_BUILDER_REPLICA_WAIT", "0s", "builder.replica_wait: must be a positive duration such as 10s (got 0s)"},
		// 100h let a stuck replica hold every build that long.
		{"CATALOGUE_BUILDER_REPLICA_WAIT", "100h", "builder.replica_wait: must be at most 1m: while the replica lags, every build told of a change waits this long, and the builds after it with it (got 100h0m0s)"},
		{"CATALOGUE_BUILDER_REPLICA_WAIT", "61s", "builder.replica_wait: must be at most 1m"},
		{"CATALOGUE_BUILDER_REPLICA_WAIT", "1m", ""},
		{"CATALOGUE_BUILDER_METRICS_LISTEN", "9464", `builder.metrics_listen: must be an address such as 127.0.0.1:9464 (got "9464")`},
		{"CATALOGUE_BUILDER_LISTEN", "maybe", "builder.listen"},
		{"CATALOGUE_EDGE_METRICS_LISTEN", "9465", `edge.metrics_listen: must be an address such as 127.0.0.1:9465 (got "9465")`},
		{"CATALOGUE_EDGE_METRICS_LISTEN", ":8080", `edge.metrics_listen: must not be edge.listen: metrics are kept off the public port (D26) (got ":8080")`},
		{"CATALOGUE_EDGE_METRICS_LISTEN", "127.0.0.1:9465", ""},
		{"CATALOGUE_EDGE_SHUTDOWN_DELAY", "-1s", "edge.shutdown_delay: must be between 0s and 1m (got -1s)"},
		{"CATALOGUE_EDGE_SHUTDOWN_DELAY", "61s", "edge.shutdown_delay: must be between 0s and 1m (got 1m1s)"},
		{"CATALOGUE_EDGE_SHUTDOWN_DELAY", "0s", ""},
		{"CATALOGUE_EDGE_SHUTDOWN_DELAY", "1m", ""},
		{"CATALOGUE_EDGE_BASE_PATH", "api/v2", "edge.base_path: must start with / and not end with /"},
		{"CATALOGUE_EDGE_BASE_PATH", "/api/v2/", "edge.base_path: must start with / and not end with /"},
		// 1ns polled the store continuously, at 41% of a CPU; 1h is an edge that barely polls
		// (scripts/bench.sh), which is allowed.
		{"CATALOGUE_EDGE_POLL_INTERVAL", "0s", "edge.poll_interval: must be at least 100ms"},
		{"CATALOGUE_EDGE_POLL_INTERVAL", "1ns", "edge.poll_interval: must be at least 100ms: a shorter interval spends the store's requests and the edge's CPU on polling (got 1ns)"},
		{"CATALOGUE_EDGE_POLL_INTERVAL", "99ms", "edge.poll_interval: must be at least 100ms"},
		{"CATALOGUE_EDGE_POLL_INTERVAL", "100ms", ""},
		{"CATALOGUE_EDGE_POLL_INTERVAL", "1h", ""},
		{"CATALOGUE_EDGE_TOKEN_REFRESH", "45s", "edge.token_refresh: must be at most 20s"},
		// 25 s of refresh, 5 s of query timeout and any replication lag exceed D22's 30 s (D47).
		{"CATALOGUE_EDGE_TOKEN_REFRESH", "25s", "edge.token_refresh: must be at most 20s so that revocation takes effect within 30 s"},
		{"CATALOGUE_EDGE_SEARCH_TIMEOUT", "-1s", "edge.search_timeout: must be a positive duration"},
		// A search blocked 40 s got an empty reply: the edge's write timeout (30 s) had closed
		// the connection before its 503. The answer needs a second to spare (statementMargin).
		{"CATALOGUE_EDGE_SEARCH_TIMEOUT", "40s", "edge.search_timeout: must be less than 29s, so that a search's 503 is written before the edge's write timeout (30s) closes the connection (got 40s)"},
		{"CATALOGUE_EDGE_SEARCH_TIMEOUT", "29s", "edge.search_timeout: must be less than 29s"},
		{"CATALOGUE_EDGE_SEARCH_TIMEOUT", "28s", ""},
		{"CATALOGUE_EDGE_CACHE_MAX_AGE", "-1s", "edge.cache_max_age: must not be negative"},
		// 100000h let partners keep a document for 11 years, withdrawn classes and all.
		{"CATALOGUE_EDGE_CACHE_MAX_AGE", "100000h", "edge.cache_max_age: must be at most 24h: a partner may show a cached document this long after it changed, and no one can recall it (got 100000h0m0s)"},
		{"CATALOGUE_EDGE_CACHE_MAX_AGE", "25h", "edge.cache_max_age: must be at most 24h"},
		{"CATALOGUE_EDGE_CACHE_MAX_AGE", "24h", ""},
		{"CATALOGUE_EDGE_CACHE_MAX_AGE", "0s", ""},
		{"CATALOGUE_EDGE_SEARCH_CACHE", "-1s", "edge.search_cache: must not be negative (0 disables the cache) (got -1s)"},
		{"CATALOGUE_EDGE_SEARCH_CACHE", "soon", "edge.search_cache"},
		{"CATALOGUE_EDGE_JWT_HMAC_SECRET", "short-secret", "edge.jwt.hmac_secret: must be at least 32 bytes (RFC 7518: as long as the SHA-256 hash) (got 12 bytes)"},
		{"CATALOGUE_EDGE_JWT_HMAC_SECRET", strings.Repeat("s", 32), ""},
		{"CATALOGUE_EDGE_JWT_JWKS_URL", "http://idp.example/jwks.json", `edge.jwt.jwks_url: must be an https:// URL (http:// only to localhost) (got "http://idp.example/jwks.json")`},
		{"CATALOGUE_EDGE_JWT_JWKS_URL", "idp.example/jwks.json", "edge.jwt.jwks_url: must be an https:// URL"},
		{"CATALOGUE_EDGE_JWT_JWKS_URL", "https://idp.example/.well-known/jwks.json", ""},
		{"CATALOGUE_EDGE_JWT_JWKS_URL", "http://127.0.0.1:8081/jwks.json", ""},
		{"CATALOGUE_EDGE_JWT_JWKS_URL", "http://localhost/jwks.json", ""},
		{"CATALOGUE_EDGE_JWT_LEEWAY", "-1s", "edge.jwt.leeway: must be between 0s and 5m0s (got -1s)"},
		{"CATALOGUE_EDGE_JWT_LEEWAY", "1h", "edge.jwt.leeway: must be between 0s and 5m0s (got 1h0m0s)"},
		{"CATALOGUE_EDGE_JWT_LEEWAY", "0s", ""},
		{"CATALOGUE_EDGE_JWT_STUDENT_CLAIM", " ", `edge.jwt.student_claim: must name a claim, such as sub (got "")`},
		{"CATALOGUE_EDGE_JWT_MAX_LIFETIME", "0s", "edge.jwt.max_lifetime: must be a positive duration such as 24h (got 0s)"},
		{"CATALOGUE_EDGE_JWT_MAX_LIFETIME", "-1h", "edge.jwt.max_lifetime: must be a positive duration such as 24h (got -1h0m0s)"},
		{"CATALOGUE_EDGE_JWT_MAX_LIFETIME", "720h", ""},
		{"CATALOGUE_WEBHOOKS_TIMEOUT", "11s", "webhooks.timeout: must be between 1ms and 10s (D42: a 2xx within 10 s is success) (got 11s)"},
		{"CATALOGUE_WEBHOOKS_RETRY_FOR", "0s", "webhooks.retry_for: must be at least 24h, the retries D42 promises partners (got 0s)"},
		{"CATALOGUE_WEBHOOKS_RETRY_MAX", "1s", "webhooks.retry_max: must be at least webhooks.retry_base (5s) (got 1s)"},
		// An endpoint disabled before retry_for (24h) has passed cuts short D42's retries.
		{"CATALOGUE_WEBHOOKS_DISABLE_AFTER", "1s", "webhooks.disable_after: must be at least webhooks.retry_for (24h0m0s): an endpoint disabled sooner would cut short the retries D42 promises (got 1s)"},
		{"CATALOGUE_WEBHOOKS_DISABLE_AFTER", "23h", "webhooks.disable_after: must be at least webhooks.retry_for (24h0m0s)"},
		{"CATALOGUE_WEBHOOKS_DISABLE_AFTER", "24h", ""},
		{"CATALOGUE_WEBHOOKS_STUCK_AFTER", "10s", "webhooks.stuck_after: must be longer than webhooks.timeout (10s)"},
		{"CATALOGUE_WEBHOOKS_WORKERS", "0", "webhooks.workers: must be >= 1 (got 0)"},
		{"CATALOGUE_WEBHOOKS_ALLOW_PRIVATE", "true", ""},
		{"CATALOGUE_EDGE_REDIS_URL", "redis://10.0.0.5:6379/0", ""},
		{"CATALOGUE_EDGE_REDIS_URL", "rediss://:s3cret@redis.internal", ""},
		{"CATALOGUE_EDGE_REDIS_URL", "http://:s3cret@10.0.0.5:6379", "edge.redis_url: must be redis://[:PASSWORD@]HOST:PORT/DB, or rediss:// for TLS (got a value of another form)"},
		{"CATALOGUE_EDGE_REDIS_URL", "redis://10.0.0.5:6379/x", "edge.redis_url: must be redis://"},
		{"CATALOGUE_EDGE_REDIS_URL", "10.0.0.5:6379", "edge.redis_url: must be redis://"},
		{"CATALOGUE_EDGE_REDIS_TIMEOUT", "0s", "edge.redis_timeout: must be between 1ms and 1s: a Redis that hangs costs a request up to this much (got 0s)"},
		{"CATALOGUE_EDGE_REDIS_TIMEOUT", "2s", "edge.redis_timeout: must be between 1ms and 1s"},
		{"CATALOGUE_EDGE_REDIS_TIMEOUT", "5ms", ""},
		{"CATALOGUE_EDGE_CORS_ORIGINS", "https://shop.example/,kiosk.example", `edge.cors_origins: must be origins such as https://shop.example (a scheme and a host, no path) (got "https://shop.example/")`},
		{"CATALOGUE_EDGE_CORS_ORIGINS", "kiosk.example", `edge.cors_origins: must be origins such as https://shop.example (a scheme and a host, no path) (got "kiosk.example")`},
		{"CATALOGUE_EDGE_CORS_ORIGINS", "https://shop.example:8443/app", `(got "https://shop.example:8443/app")`},
		{"CATALOGUE_EDGE_CORS_ORIGINS", "https://shop.example,http://localhost:3000,https://*.partner.example", ""},
		{"CATALOGUE_EDGE_CORS_ORIGINS", "*", ""},
		{"CATALOGUE_STORE_REGION", "", `store.region: must name a region, such as us-east-1 (got "")`},
		// An empty variable is a value (TestEmptyVariableOverridesTheFile), refused here.
		{"CATALOGUE_EDGE_LISTEN", "", `edge.listen: must be an address such as :8080 (got "")`},
		// D36: tombstones kept at least 48 hours.
		{"CATALOGUE_WEBHOOKS_RETRY_FOR", "23h", "webhooks.retry_for: must be at least 24h"},
		{"CATALOGUE_WEBHOOKS_RETRY_FOR", "24h", ""},
		{"CATALOGUE_FEEDS_RETENTION", "47h", "feeds.retention: must be at least 48h"},
		{"CATALOGUE_FEEDS_RETENTION", "48h", ""},
		{"CATALOGUE_FEEDS_LICENSE", "cc-by", `feeds.license: must be an absolute URL (got "cc-by")`},
		{"CATALOGUE_EDGE_PUBLIC_URL", "https://api.example.com", ""},
		{"CATALOGUE_EDGE_PUBLIC_URL", "https://api.example.com/", "edge.public_url: must be an http:// or https:// URL"},
		{"CATALOGUE_EDGE_PUBLIC_URL", "api.example.com", "edge.public_url: must be an http:// or https:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.env+"="+tt.val, func(t *testing.T) {
			t.Setenv(tt.env, tt.val)
			_, err := Load("", nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load with %s=%q: %v, want no error", tt.env, tt.val, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load with %s=%q: error %v, want it to contain %q", tt.env, tt.val, err, tt.want)
			}
		})
	}
}

func TestLoadRefusesAMissingOrBrokenFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil); err == nil {
		t.Error("Load of a missing file: no error")
	}
	if _, err := Load(writeFile(t, "edge: [unclosed"), nil); err == nil {
		t.Error("Load of malformed YAML: no error")
	}
	if _, err := Load(writeFile(t, "edge:\n  rate_limit: lots\n"), nil); err == nil {
		t.Error("Load of a non-number rate limit: no error")
	}
}

// TestLoadRefusesDurationsWithoutUnit: a bare number in the file is no duration, and a
// number an integer key cannot hold whole is refused rather than truncated. viper would
// read "poll_interval: 5" as 5 ns (a poll in a tight loop), "search_timeout: 2" as 2 ns
// (every search a 503), and the checks above zero let them through. 0 is the same in every
// unit, and a value with its unit loads.
func TestLoadRefusesDurationsWithoutUnit(t *testing.T) {
	for body, want := range map[string]string{
		"edge:\n  poll_interval: 5\n":       `edge.poll_interval: a duration needs its unit, such as "5s" or "500ms" (got 5)`,
		"edge:\n  search_timeout: 2.5\n":    `edge.search_timeout: a duration needs its unit, such as "5s" or "500ms" (got 2.5)`,
		"builder:\n  collect_grace: 3600\n": `builder.collect_grace: a duration needs its unit, such as "5s" or "500ms" (got 3600)`,
	} {
		_, err := Load(writeFile(t, body), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load of %q: error %v, want it to contain %q", body, err, want)
		}
	}
	for body, want := range map[string]string{
		"builder:\n  keep: 3.7\n":                     "builder.keep: must be a whole number within ±9223372036854775807 (got 3.7)",
		"edge:\n  rate_limit: 99999999999999999999\n": "edge.rate_limit: must be a whole number within ±9223372036854775807 (got 1e+20)",
	} {
		_, err := Load(writeFile(t, body), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load of %q: error %v, want it to contain %q", body, err, want)
		}
	}
	c, err := Load(writeFile(t, "edge:\n  poll_interval: 5s\n  search_cache: 0\n"), nil)
	if err != nil || c.Edge.PollInterval != 5*time.Second || c.Edge.SearchCache != 0 {
		t.Errorf("Load of poll_interval 5s and search_cache 0: %v, %v, %v; want 5s and 0", err, c.Edge.PollInterval, c.Edge.SearchCache)
	}
}

// The example file documents every key with its default; loading it must give the defaults,
// database.url's (none) included.
func TestExampleFileDocumentsEveryKey(t *testing.T) {
	body, err := os.ReadFile("catalogue.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range Keys() {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if !strings.Contains(string(body), leaf+":") {
			t.Errorf("catalogue.example.yaml does not show %s", key)
		}
	}
	got, err := Load("catalogue.example.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), got); diff != "" {
		t.Errorf("example file values differ from the defaults (-want +got):\n%s", diff)
	}
}

func TestEnvNameAndRedacted(t *testing.T) {
	if got, want := EnvName("edge.rate_limit"), "CATALOGUE_EDGE_RATE_LIMIT"; got != want {
		t.Errorf("EnvName = %q, want %q", got, want)
	}
	c := Config{Database: Database{URL: "postgres://u:hunter2@h/db"}, Replica: Replica{URL: "postgres://h/db"}}
	c.Edge.JWT = JWT{HMACSecret: "hunter3-hunter3-hunter3-hunter3-hunter3", JWKSURL: "https://idp.example/jwks.json"}
	c.Edge.RedisURL, c.Edge.RedisPassword = "rediss://default:hunter4@redis.internal:6380/2", "hunter5"
	r := c.Redacted()
	if strings.Contains(fmt.Sprintf("%+v", r), "hunter") || r.Replica.URL != "postgres://h/db" || r.Edge.JWT.JWKSURL != c.Edge.JWT.JWKSURL ||
		!strings.Contains(r.Edge.RedisURL, "redis.internal:6380/2") {
		t.Errorf("Redacted = %+v, want the passwords and the JWT secret hidden, other values unchanged", r)
	}
}

// TestRedactedHidesEveryPasswordForm: each form a password can take in a PostgreSQL
// connection string (libpq's URL with user info or a password parameter, its key=value
// form) or in an S3 endpoint is hidden in the logged configuration, and what is not secret
// stays readable.
func TestRedactedHidesEveryPasswordForm(t *testing.T) {
	tests := []struct {
		in   string
		keep []string // parts that must still be shown
	}{
		{"postgres://u:hunter2@h:5432/db?sslmode=disable", []string{"u", "h:5432/db", "sslmode=disable"}},
		{"postgres://u@h/db?password=hunter2&sslmode=require", []string{"u@h/db", "sslmode=require"}},
		{"postgres://h/db?sslmode=verify-full&PassWord=hunter2", []string{"sslmode=verify-full"}},
		{"postgresql://h/db?sslpassword=hunter2", []string{"h/db"}},
		{"postgres://h/db?password=hunter2%26x", []string{"h/db"}},
		{"host=h user=u password=hunter2 dbname=db", []string{"host=h", "user=u", "dbname=db"}},
		{"host=h password = 'hunter2 with spaces' dbname=db", []string{"host=h", "dbname=db"}},
		{"postgres://u:hunter2@h:port/db", nil}, // not a valid URL: hidden whole
	}
	for _, tt := range tests {
		c := Config{Database: Database{URL: tt.in}, Replica: Replica{URL: tt.in}}
		r := c.Redacted()
		for key, got := range map[string]string{"database.url": r.Database.URL, "replica.url": r.Replica.URL} {
			if strings.Contains(got, "hunter2") {
				t.Errorf("Redacted(%s = %q) = %q, want the secret hidden", key, tt.in, got)
			}
			for _, k := range tt.keep {
				if !strings.Contains(got, k) {
					t.Errorf("Redacted(%s = %q) = %q, want %q still shown", key, tt.in, got, k)
				}
			}
		}
	}
	// An endpoint's user info is an access key at best: hidden whole.
	for _, in := range []string{"http://minio:hunter2@127.0.0.1:9000", "http://hunter2@127.0.0.1:9000", "http://hunter2@127.0.0.1:port"} {
		if got := (Config{Store: Store{Endpoint: in}}).Redacted().Store.Endpoint; strings.Contains(got, "hunter2") {
			t.Errorf("Redacted(store.endpoint = %q) = %q, want the user info hidden", in, got)
		}
	}
	plain := "http://127.0.0.1:9000"
	if got := (Config{Store: Store{Endpoint: plain}}).Redacted().Store.Endpoint; got != plain {
		t.Errorf("Redacted(store.endpoint = %q) = %q, want it unchanged", plain, got)
	}
}

func TestToday(t *testing.T) {
	// 2027-01-01 03:00 UTC is still 2026-12-31 in Chicago (UTC-6).
	now := time.Date(2027, 1, 1, 3, 0, 0, 0, time.UTC)
	for zone, want := range map[string]string{"UTC": "2027-01-01", "America/Chicago": "2026-12-31", "Asia/Tokyo": "2027-01-01"} {
		c := Config{Timezone: zone}
		if got := c.Today(now).Format(time.DateOnly); got != want {
			t.Errorf("Today in %s = %s, want %s", zone, got, want)
		}
	}
}

func TestTrustedProxies(t *testing.T) {
	t.Setenv("CATALOGUE_EDGE_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.0/24")
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"10.0.0.0/8", "192.0.2.0/24"}, c.Edge.TrustedProxies); diff != "" {
		t.Errorf("edge.trusted_proxies mismatch (-want +got):\n%s", diff)
	}
	t.Setenv("CATALOGUE_EDGE_TRUSTED_PROXIES", "10.0.0.1")
	if _, err := Load("", nil); err == nil || !strings.Contains(err.Error(), "edge.trusted_proxies: must be CIDR ranges") {
		t.Errorf("Load with a bare address: error %v, want edge.trusted_proxies named", err)
	}
}

// TestMetricsListenPortZero: edge.listen and edge.metrics_listen both on port 0 (as tests
// start edges) are two ports the system picks, not one address.
func TestMetricsListenPortZero(t *testing.T) {
	t.Setenv("CATALOGUE_EDGE_LISTEN", "127.0.0.1:0")
	t.Setenv("CATALOGUE_EDGE_METRICS_LISTEN", "127.0.0.1:0")
	if _, err := Load("", nil); err != nil {
		t.Errorf("Load: %v, want no error", err)
	}
}

// TestLogValue: the configuration is logged one field per key as the file names it, secrets
// redacted, durations as Go durations, not nanoseconds.
func TestLogValue(t *testing.T) {
	c := Default()
	c.Database.URL = "postgres://u:hunter2@h/db"
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("configuration", "config", c)
	for _, want := range []string{`"edge.token_refresh":"10s"`, `"builder.collect_grace":"1h0m0s"`, `"edge.rate_limit":60`,
		`"database.url":"postgres://u:xxxxx@h/db"`, `"log.requests":true`, `"edge.cors_origins":null`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("logged configuration lacks %s:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "hunter2") || strings.Contains(b.String(), "10000000000") {
		t.Errorf("logged configuration shows a secret or a duration in nanoseconds:\n%s", b.String())
	}
}

// TestEmptyVariableOverridesTheFile: a variable set to the empty string is a value, as it
// is to a shell: CATALOGUE_EDGE_REDIS_URL= turns one edge's Redis off where the shared file
// sets it (viper ignored an empty variable, and the file's value stood). A key that has no
// empty value (a number, a duration, a switch) is refused with the variable named, not
// read as 0 or false.
func TestEmptyVariableOverridesTheFile(t *testing.T) {
	path := writeFile(t, "edge:\n  redis_url: redis://127.0.0.1:6379/0\n  public_url: https://api.example.com\n")
	t.Setenv("CATALOGUE_EDGE_REDIS_URL", "")
	t.Setenv("CATALOGUE_EDGE_PUBLIC_URL", "")
	c, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Edge.RedisURL != "" || c.Edge.PublicURL != "" {
		t.Errorf("edge.redis_url %q, edge.public_url %q with both variables empty; want both empty", c.Edge.RedisURL, c.Edge.PublicURL)
	}

	for name, want := range map[string]string{
		"CATALOGUE_EDGE_RATE_LIMIT":    "edge.rate_limit: CATALOGUE_EDGE_RATE_LIMIT is empty",
		"CATALOGUE_EDGE_POLL_INTERVAL": "edge.poll_interval: CATALOGUE_EDGE_POLL_INTERVAL is empty",
		"CATALOGUE_EDGE_SEARCH_INDEX":  "edge.search_index: CATALOGUE_EDGE_SEARCH_INDEX is empty",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "")
			_, err := Load(path, nil)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Load with %s empty: error %v, want it to contain %q", name, err, want)
			}
		})
	}
}

// TestScheduleGap: builder.schedule's interval is an "@every" schedule's duration as cron
// runs it (whole seconds, at least one), else the time between the next two builds; a spec
// that never fires has none.
func TestScheduleGap(t *testing.T) {
	now := time.Date(2027, 3, 10, 10, 0, 30, 0, time.UTC)
	for spec, want := range map[string]time.Duration{
		"@every 0s":    time.Second,
		"@every 90s":   90 * time.Second,
		"*/5 * * * *":  5 * time.Minute,
		"0,1 * * * *":  59 * time.Minute, // 10:01, then 11:00
		"@daily":       24 * time.Hour,
		"0 0 30 2 *":   0, // February 30th
		"* * * * *":    time.Minute,
		"@every 1m30s": 90 * time.Second,
	} {
		sched, err := cron.ParseStandard(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		if got := scheduleGap(sched, now); got != want {
			t.Errorf("scheduleGap(%q) = %v, want %v", spec, got, want)
		}
	}
}

// TestDisableAfterFollowsRetryFor: webhooks.disable_after is bounded by the configured
// webhooks.retry_for, not only by its least.
func TestDisableAfterFollowsRetryFor(t *testing.T) {
	t.Setenv("CATALOGUE_WEBHOOKS_RETRY_FOR", "72h")
	t.Setenv("CATALOGUE_WEBHOOKS_DISABLE_AFTER", "48h")
	want := "webhooks.disable_after: must be at least webhooks.retry_for (72h0m0s)"
	if _, err := Load("", nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load with retry_for 72h, disable_after 48h: error %v, want it to contain %q", err, want)
	}
	t.Setenv("CATALOGUE_WEBHOOKS_DISABLE_AFTER", "72h")
	if _, err := Load("", nil); err != nil {
		t.Errorf("Load with retry_for and disable_after 72h: %v, want no error", err)
	}
}

// TestLoadRefusesSeveralDocuments: a file of several YAML documents is refused, naming the
// file: viper reads the first alone, and "edge: {}\n---\nedge:\n  rate_limit: 9" loaded with
// rate_limit 60. A --- that begins a line ends a document anywhere (YAML 1.2, c-forbidden);
// indented, or in a comment, it is text.
func TestLoadRefusesSeveralDocuments(t *testing.T) {
	for _, body := range []string{
		"edge: {}\n---\nedge:\n  rate_limit: 9\n",
		"---\n---\nedge:\n  rate_limit: 9\n",          // an empty first document: every default
		"edge:\n  rate_limit: 9\n--- \n",              // a second document, empty
		"edge:\n  rate_limit: 9\n...\nedge: {}\n",     // a bare document after the end of one
		"# the edge\n---\nedge: {}\n--- {edge: {}}\n", // on the marker's line
	} {
		path := writeFile(t, body)
		want := "read config " + path + ": more than one YAML document"
		if _, err := Load(path, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load of %q: error %v, want it to contain %q", body, err, want)
		}
	}
	for body, want := range map[string]int{
		"---\nedge:\n  rate_limit: 9\n":                                                  9,
		"%YAML 1.1\n---\nedge:\n  rate_limit: 9\n...\n":                                  9,
		"# ---\nedge:\n  rate_limit: 9\n  jwt:\n    issuer: |\n      ---\n      --- x\n": 9,
		"\ufeff---\nedge:\n  rate_limit: 9\n":                                            9,
	} {
		c, err := Load(writeFile(t, body), nil)
		if err != nil || c.Edge.RateLimit != want {
			t.Errorf("Load of %q: %v, rate_limit %d; want no error and %d", body, err, c.Edge.RateLimit, want)
		}
	}
}
