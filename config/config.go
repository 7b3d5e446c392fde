// Package config holds the catalogue's configuration: defaults, loading from a YAML file, the
// environment and flags (through viper), and validation. It is the only package that imports
// viper, so every other package receives plain values.
package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/spf13/viper"
)

// EnvPrefix is the prefix of every environment variable: database.url is CATALOGUE_DATABASE_URL.
const EnvPrefix = "CATALOGUE"

// Config is the whole configuration of both binaries.
type Config struct {
	Database  Database
	Replica   Replica
	Store     Store
	Timezone  string
	Templates Templates
	Builder   Builder
	Edge      Edge
	Feeds     Feeds
	Webhooks  Webhooks
	Log       Log
}

// Log configures what the commands log (JSON lines on stderr).
type Log struct {
	// Requests makes the edge log one line per request; false leaves only the rest.
	Requests bool
}

// Database is the provider's primary PostgreSQL, used by migrate, seed and token.
type Database struct {
	URL string
}

// Replica is the read replica the builder reads and the edge searches.
// An empty URL means database.url.
type Replica struct {
	URL string
}

// Store says where snapshots are published.
type Store struct {
	URL      string // file://PATH or s3://BUCKET/PREFIX
	Endpoint string // S3-compatible endpoint (MinIO); path-style when set
	Region   string
}

// Templates says where SQL overrides live; empty means the embedded defaults only.
type Templates struct {
	Dir string
}

// Builder configures builder serve and the publication of snapshots.
type Builder struct {
	Schedule  string  // cron spec for builder serve
	Keep      int     // snapshots kept for rollback
	MaxShrink float64 // refuse a build that shrinks more than this
	// CollectGrace is how long a snapshot that no pointer keeps (one not yet published, or
	// one past keep) is left in the store after its build started, with its objects.
	CollectGrace time.Duration
	// Listen makes builder serve LISTEN on database.url for the notifications of the
	// triggers that builder migrate installs (and migrate install them; off: remove them),
	// and publish each change within seconds. Off: builds run on Schedule only.
	Listen bool
	// Debounce is the quiet period after a change before its build starts, so that a burst
	// of changes makes one build; MaxDelay bounds that wait when changes keep coming.
	Debounce time.Duration
	MaxDelay time.Duration
	// ReplicaWait bounds how long a build waits for the replica to replay a change it was
	// told about before it reads anyway.
	ReplicaWait time.Duration
	// MetricsListen is the address where builder serve answers /metrics (Prometheus);
	// empty: no listener.
	MetricsListen string
}

// Edge configures the edge server.
type Edge struct {
	Listen string
	// ShutdownDelay is how long the edge, told to stop, goes on serving with /readyz
	// answering 503 before it stops accepting connections, so that its load balancer takes
	// it out of rotation first; 0: at once. At most MaxShutdownDelay.
	ShutdownDelay time.Duration
	BasePath      string
	RateLimit     int
	PollInterval  time.Duration
	TokenRefresh  time.Duration
	CacheMaxAge   time.Duration
	CORSOrigins   []string
	CacheDir      string
	SearchTimeout time.Duration
	// SearchCache is how long the edge reuses a live search's response for the same
	// parameters (and the same "today"); 0 disables the cache, so every search queries.
	SearchCache time.Duration
	// SearchIndex keeps the class search's matching data in memory (edge/search/index), so
	// that a search reads only its page's classes from the replica; false: every search
	// runs entirely in the replica (templates/search.sql).
	SearchIndex bool
	// TrustedProxies are the CIDR ranges of load balancers in front of the edge. Empty: the
	// client address is the direct peer. Set: X-Forwarded-For is read, trusting only these.
	TrustedProxies []string
	// PublicURL is the scheme and host (and any path before base_path) partners reach the
	// edge at, which the feeds' next URLs start with (D37); empty: taken from each request.
	PublicURL string
	// RedisURL is the Redis the edges share their rate limits through (redis:// or
	// rediss://); empty: each edge counts in memory. RedisPassword is used when the URL
	// has none; RedisTimeout bounds each call to Redis, past which the edge counts in memory.
	RedisURL      string
	RedisPassword string
	RedisTimeout  time.Duration
	// JWT configures the signed-in students' tokens (D30, D31).
	JWT JWT
	// MetricsListen is the address where the edge answers /metrics (Prometheus), never on
	// Listen, which the public reaches (D26); empty: no metrics listener.
	MetricsListen string
}

// Webhooks configures the deliveries of builder serve to partners' endpoints (D40-D43).
type Webhooks struct {
	// AllowHTTP permits http:// endpoints; AllowPrivate permits endpoints at private,
	// loopback and link-local addresses (D43). Both are for tests and private networks.
	AllowHTTP    bool
	AllowPrivate bool
	// Timeout bounds one delivery, from connecting to the end of the response (D42: a 2xx
	// within 10 s is success).
	Timeout time.Duration
	// RetryBase is the wait after a delivery's first failure; each later wait doubles, up to
	// RetryMax, with jitter. A delivery is retried until RetryFor (at least MinRetryFor) has
	// passed since its first attempt; an endpoint whose deliveries have failed for
	// DisableAfter is disabled.
	RetryBase    time.Duration
	RetryMax     time.Duration
	RetryFor     time.Duration
	DisableAfter time.Duration
	// EdgeWait is how long a delivery waits for the edges to serve its snapshot before a
	// warning; it waits on (D42).
	EdgeWait time.Duration
	// StuckAfter is how long a delivery job may stay running before another builder takes
	// it as abandoned (its builder was killed) and runs it again.
	StuckAfter time.Duration
	// Workers bounds the deliveries one builder makes at once (to different endpoints).
	Workers int
}

// MaxWebhookTimeout is the longest webhooks.timeout: D42 counts a 2xx within 10 s as success.
const MaxWebhookTimeout = 10 * time.Second

// JWT configures verification of students' JWTs (D30, D31): off unless HMACSecret or
// JWKSURL is set.
type JWT struct {
	HMACSecret   string        // HS256 shared secret
	JWKSURL      string        // RS256, ES256, EdDSA keys
	Issuer       string        // iss must equal it when set
	Audience     string        // aud must hold it when set
	Leeway       time.Duration // clock skew allowed on exp, nbf, iat
	StudentClaim string        // the claim naming the student
	MaxLifetime  time.Duration // longest exp - iat accepted
}

// Enabled reports whether JWTs are accepted at all (D30).
func (j JWT) Enabled() bool { return j.HMACSecret != "" || j.JWKSURL != "" }

// minHMACSecret is the shortest HS256 secret accepted: RFC 7518 section 3.2 requires a key of
// at least the hash's size, 256 bits.
const minHMACSecret = 32

// maxLeeway bounds edge.jwt.leeway: clock skew is seconds; more would keep expired tokens alive.
const maxLeeway = 5 * time.Minute

// MaxTokenRefresh is the longest edge.token_refresh: a revoked token must stop working within
// 30 s (D22), and it can take the refresh interval, then the reload's query (bounded at 5 s
// by the edge), plus the replica's lag (5 s allowed for) to reach an edge.
const MaxTokenRefresh = 20 * time.Second

// MinScheduleGap is the shortest time builder.schedule may leave between two builds: each
// is a full build, and "@every 0s" made one every second.
const MinScheduleGap = time.Minute

// scheduleGap returns the time between builds of s: an "@every" schedule's duration (as cron
// runs it: whole seconds, at least one), else the time between its next two activations
// after now; 0 for a schedule that never fires (February 30th).
func scheduleGap(s cron.Schedule, now time.Time) time.Duration {
	if every, ok := s.(cron.ConstantDelaySchedule); ok {
		return every.Delay
	}
	first := s.Next(now)
	second := s.Next(first)
	if first.IsZero() || second.IsZero() {
		return 0
	}
	return second.Sub(first)
}

// MaxReplicaWait is the longest builder.replica_wait: while the replica lags, every build
// told of a change waits the whole of it, holding up the next (100h was accepted); past a
// minute the change is better left to a later build.
const MaxReplicaWait = time.Minute

// MaxCacheMaxAge is the longest edge.cache_max_age, the max-age of the static documents
// partners cache: they change with the catalogue, and a private cache's copy cannot be
// recalled, so a day bounds how stale a partner's may be (100000h was accepted).
const MaxCacheMaxAge = 24 * time.Hour

// MaxShutdownDelay is the longest edge.shutdown_delay: load balancers' health checks take
// seconds to drop an edge, and a supervisor waits only so long for a process to stop.
const MaxShutdownDelay = time.Minute

// MinPollInterval is the shortest edge.poll_interval: polling faster, 1ns at worst, kept an
// edge asking the store in a loop (41% of a CPU) for changes served a few milliseconds sooner.
const MinPollInterval = 100 * time.Millisecond

// EdgeWriteTimeout is the WriteTimeout of the edge's HTTP server: a response not written
// within it of the end of its request's headers is cut off, and the client gets an empty
// reply instead of it. edge.search_timeout must leave room under it (MaxSearchTimeout).
const EdgeWriteTimeout = 30 * time.Second

// SearchTimeoutMargin is what edge.search_timeout leaves of EdgeWriteTimeout to write the
// 503 of a search that timed out (and, before the search, to read, authenticate and count
// the request): a second, also how much longer cmd/edge lets PostgreSQL's own statement
// timeout run than the edge's.
const SearchTimeoutMargin = time.Second

// MaxSearchTimeout bounds edge.search_timeout, which must be less than it.
const MaxSearchTimeout = EdgeWriteTimeout - SearchTimeoutMargin

// Feeds configures the RPDE feeds (D35-D39).
type Feeds struct {
	// Retention is how long a deleted course or class stays in the feeds as a tombstone
	// (D36); at least MinRetention, so that a partner that reads once a day sees it.
	Retention time.Duration
	License   string // the URL every feed page names as "license"
}

// MinRetention is the shortest feeds.retention (D36).
const MinRetention = 48 * time.Hour

// MinRetryFor is the shortest webhooks.retry_for (D42).
const MinRetryFor = 24 * time.Hour

// EnvName returns the environment variable that overrides key.
func EnvName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Load layers the defaults, then the YAML file at path (if path is not empty), then the
// environment, then overrides (flag values keyed like "store.url"), and validates the result.
func Load(path string, overrides map[string]any) (Config, error) {
	v := viper.New()
	for k, val := range defaults() {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	// A variable set to "" is a value, as to a shell: CATALOGUE_EDGE_REDIS_URL= turns Redis
	// off where the file sets it; decode refuses it for a key with no empty value.
	v.AllowEmptyEnv(true)
	v.AutomaticEnv()
	bindEnv(v)
	if path != "" {
		v.SetConfigFile(path)
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("read config %s: %w", path, err)
		}
		if err := oneDocument(path); err != nil {
			return Config{}, fmt.Errorf("read config %s: %w", path, err)
		}
	}
	if err := checkUnknown(path, os.Environ()); err != nil {
		return Config{}, err
	}
	for k, val := range overrides {
		v.Set(k, val)
	}
	c, err := decode(v)
	if err != nil {
		return Config{}, err
	}
	// A comma-separated environment value arrives as one string; split it.
	c.Edge.CORSOrigins = splitList(c.Edge.CORSOrigins)
	c.Edge.TrustedProxies = splitList(c.Edge.TrustedProxies)
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// oneDocument refuses a YAML file of more than one document: viper reads the first alone,
// and the keys of the others would be ignored without a word ("edge: {}\n---\nedge:
// rate_limit: 9" gave 60). A file of another type (by its extension, as viper reads it) has
// no documents.
func oneDocument(path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
		return nil
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if severalDocuments(string(body)) {
		return errors.New("more than one YAML document (a line beginning with --- or ... ends one): only the first would be read; write every key in one")
	}
	return nil
}

// severalDocuments reports whether the YAML stream body holds more than one document,
// empty ones included: a second "---" marker, one after the first document's content, or
// content after a "..." end marker. A marker is --- or ... at the start of a line, alone or
// followed by white space, which YAML 1.2 lets no scalar hold (c-forbidden): so a line is
// one wherever it is, and an indented --- is text. Directives (%YAML) may precede the
// first marker; comments and blank lines are no content.
func severalDocuments(body string) bool {
	var started, ended, content bool
	for line := range strings.SplitSeq(strings.TrimPrefix(body, "\ufeff"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case docMarker(line, "---"):
			if started || ended || content {
				return true
			}
			started, content = true, hasContent(line[3:])
		case docMarker(line, "..."):
			ended = true
		case strings.HasPrefix(line, "%") && !started && !content:
			// a directive
		case hasContent(line):
			if ended {
				return true
			}
			content = true
		}
	}
	return false
}

// docMarker reports whether line is the document marker m (--- or ...).
func docMarker(line, m string) bool {
	rest, ok := strings.CutPrefix(line, m)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// hasContent reports whether s, a line or what follows a marker on its line, holds more
// than white space and a comment.
func hasContent(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && !strings.HasPrefix(s, "#")
}

// decode fills a Config key by key, each field through viper's own decoder (durations from
// "10s", lists from "a,b"), so that a value that does not decode is named by its key.
func decode(v *viper.Viper) (Config, error) {
	var c Config
	fields := reflect.ValueOf(&c).Elem()
	var errs []error
	for _, k := range keys {
		field := fieldOf(fields, k.Name)
		if err := emptyVariable(v, k.Name, field.Kind()); err != nil {
			errs = append(errs, err)
			continue
		}
		if field.Type() == reflect.TypeFor[time.Duration]() {
			if err := bareNumber(v.Get(k.Name)); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", k.Name, err))
				continue
			}
		} else if field.CanInt() {
			if err := wholeNumber(v.Get(k.Name)); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", k.Name, err))
				continue
			}
		}
		if err := v.UnmarshalKey(k.Name, field.Addr().Interface()); err != nil {
			errs = append(errs, badValue(v, k.Name, field.Type(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("decode config: %w", err)
	}
	return c, nil
}

// badValue says why key's value, which viper's decoder refused with err, is wrong: the key,
// the environment variable when the value came from it (as emptyVariable does), the value,
// and what a key of type t takes, without the decoder's words ("cannot parse value as
// 'int': strconv.ParseInt: invalid syntax").
func badValue(v *viper.Viper, key string, t reflect.Type, err error) error {
	var want string
	switch {
	case t == reflect.TypeFor[time.Duration]():
		want = `a duration such as "5s" or "500ms"`
	case t.Kind() == reflect.Bool:
		want = "true or false"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		want = "a number such as 0.5"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		want = "a whole number"
		if errors.Is(err, strconv.ErrRange) || strings.Contains(err.Error(), "out of range") {
			want = "a whole number within ±9223372036854775807"
		}
	default:
		// The value decodes alone: mapstructure names it '' (no field), the key is named here.
		return fmt.Errorf("%s: %s", key, strings.TrimPrefix(err.Error(), "'' "))
	}
	raw := fmt.Sprint(v.Get(key))
	if name := EnvName(key); os.Getenv(name) == raw && raw != "" {
		return fmt.Errorf("%s: %s is %q, not %s", key, name, raw, want)
	}
	return fmt.Errorf("%s: %q is not %s", key, raw, want)
}

// wholeNumber refuses a number from the file that an integer key cannot hold whole: viper
// would read "keep: 3.7" as 3 and a rate_limit past int64 as its most negative value.
func wholeNumber(raw any) error {
	f, ok := raw.(float64)
	if ok && (f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64) {
		return fmt.Errorf("must be a whole number within ±9223372036854775807 (got %v)", raw)
	}
	return nil
}

// emptyVariable refuses key's variable set to "" when it is what v reads for a key of kind
// that has no empty value (a number, a duration, a switch): viper's decoder would read it as
// 0 or false, which a check may let through. A text or a list may be empty.
func emptyVariable(v *viper.Viper, key string, kind reflect.Kind) error {
	if kind == reflect.String || kind == reflect.Slice {
		return nil
	}
	name := EnvName(key)
	if val, set := os.LookupEnv(name); !set || val != "" || v.Get(key) != "" {
		return nil // unset, not empty, or overridden by a flag
	}
	return fmt.Errorf("%s: %s is empty; give it a value or unset it", key, name)
}

// bareNumber refuses a duration written as a number without its unit, as YAML gives
// "poll_interval: 5": viper would read it as 5 ns, which every check above zero lets
// through. 0 is 0 in every unit. A value from the environment or a flag is a string, which
// needs its unit anyway ("missing unit in duration").
func bareNumber(raw any) error {
	switch raw.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		if !reflect.ValueOf(raw).IsZero() {
			return fmt.Errorf(`a duration needs its unit, such as "5s" or "500ms" (got %v)`, raw)
		}
	}
	return nil
}

// ReplicaURL is the URL the builder reads and the edge searches: replica.url, else database.url.
func (c Config) ReplicaURL() string {
	if c.Replica.URL != "" {
		return c.Replica.URL
	}
	return c.Database.URL
}

// Location returns the time zone that defines "today" (decision D1).
func (c Config) Location() *time.Location {
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		return time.UTC // Validate has already refused a bad zone.
	}
	return loc
}

// Validate checks every key (each Key's Check) and names each bad one.
func (c Config) Validate() error {
	var errs []error
	for _, k := range keys {
		if k.Check != nil {
			k.Check(c, func(why string, got any) {
				errs = append(errs, fmt.Errorf("%s: %s (got %v)", k.Name, why, got))
			})
		}
	}
	return errors.Join(errs...)
}

// Bad is how a Key's Check reports its key's value wrong: why, and the value as shown
// (quoted, or described when it may hold a secret).
type Bad func(why string, got any)

// quoted shows a string value in a message.
func quoted(s string) string { return fmt.Sprintf("%q", s) }

// positive is the edge's check of a duration that must be positive.
func positive(d time.Duration, bad Bad) {
	if d <= 0 {
		bad("must be a positive duration such as 5s", d)
	}
}

// positiveDuration is the webhooks' check of a duration that must be positive.
func positiveDuration(d time.Duration, bad Bad) {
	if d <= 0 {
		bad("must be a positive duration", d)
	}
}

// postgresURL checks database.url and replica.url, without showing them (they may hold a
// password).
func postgresURL(s string, bad Bad) {
	if s != "" && !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
		bad("must be a postgres:// URL", "a value of another form")
	}
}

// publicURL checks edge.public_url, which the feeds' next URLs start with (D37).
func publicURL(s string, bad Bad) {
	if s == "" {
		return
	}
	if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(u.Path, "/") {
		bad("must be an http:// or https:// URL such as https://api.example.com, without a trailing /, query or fragment", quoted(s))
	}
}

// edgeMetricsListen checks edge.metrics_listen: an address, and not the public one (D26).
func edgeMetricsListen(e Edge, bad Bad) {
	if e.MetricsListen != "" && !strings.Contains(e.MetricsListen, ":") {
		bad("must be an address such as 127.0.0.1:9465", quoted(e.MetricsListen))
	}
	if e.MetricsListen != "" && e.MetricsListen == e.Listen && !strings.HasSuffix(e.Listen, ":0") {
		bad("must not be edge.listen: metrics are kept off the public port (D26)", quoted(e.MetricsListen))
	}
}

// maxRedisTimeout bounds edge.redis_timeout: a hung Redis must cost a request a moment, never
// its deadline.
const maxRedisTimeout = time.Second

// validRedisURL reports whether s has the form go-redis parses: redis:// or rediss://, a
// host, and at most a database number as the path.
func validRedisURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Hostname() == "" {
		return false
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		return true
	}
	n, err := strconv.Atoi(db)
	return err == nil && n >= 0
}

// validJWKSURL applies JWKSURLAllowed to edge.jwt.jwks_url.
func validJWKSURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && JWKSURLAllowed(u)
}

// JWKSURLAllowed reports whether keys may be fetched from u, edge.jwt.jwks_url or a
// redirect from it: https, or http to the local machine only. Keys fetched in the clear
// could be replaced on the way by anyone able to sign tokens with their own.
func JWKSURLAllowed(u *url.URL) bool {
	if u.Host == "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		ip, err := netip.ParseAddr(h)
		return h == "localhost" || err == nil && ip.IsLoopback()
	}
	return false
}

// splitList splits the one comma-separated string an environment variable gives.
func splitList(l []string) []string {
	if len(l) == 0 {
		return nil // an empty YAML list and an absent key mean the same
	}
	if len(l) == 1 && strings.TrimSpace(l[0]) == "" {
		return nil // an empty variable, like an empty list
	}
	if len(l) == 1 && strings.Contains(l[0], ",") {
		l = strings.Split(l[0], ",")
	}
	for i := range l {
		l[i] = strings.TrimSpace(l[i])
	}
	return l
}

// isOrigin reports whether o is an origin as a browser sends it in Origin, which is what
// the edge compares it with: "https://shop.example" matches, "https://shop.example/" and
// "shop.example" match nothing. "*" is every origin; a "*" in the host, any subdomain.
func isOrigin(o string) bool {
	if o == "*" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.Path == "" && u.User == nil && !u.ForceQuery && u.RawQuery == "" && u.Fragment == "" &&
		o == u.Scheme+"://"+u.Host
}

func validateStoreURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("must be file://PATH or s3://BUCKET/PREFIX")
	case u.Scheme == "file" && (u.Path != "" || u.Host != "" || u.Opaque != ""):
		return nil
	case u.Scheme == "s3" && u.Host != "":
		return nil
	}
	return errors.New("must be file://PATH or s3://BUCKET/PREFIX")
}

// Today returns "today" (decision D1): the calendar date at now in the configured time zone,
// as midnight UTC of that date so that it compares and formats as a plain date.
func (c Config) Today(now time.Time) time.Time {
	return Today(now, c.Location())
}

// Today is Config.Today in a zone resolved once (Config.Location reads the zone's file on
// every call).
func Today(now time.Time, loc *time.Location) time.Time {
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
