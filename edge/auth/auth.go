// Package auth decides who may call the API and how often. It holds the hashes of the
// active API tokens in memory, reloaded from the replica every edge.token_refresh, so that
// checking a token never queries the database; it verifies the JWTs of signed-in students
// (jwt.go, D30–D31); and it applies two limits (edge/ratelimit): per token or student on
// every authenticated request, at the token's own limit or edge.rate_limit, and per client
// address on failed authentication (D21–D23). Limiter keys are a token's SHA-256 in hex, a
// student as "jwt:" and the student (studentKey), and an address (or /64) as text, which
// can never be equal, so one shared limiter (Redis) can hold all three.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/edge/ratelimit"
	"github.com/trainingco/catalogue/templates"
)

// Why Admit refuses a request; the server maps each to an HTTP status.
var (
	ErrNotLoaded       = errors.New("token list not loaded yet") // no token set yet: 503
	ErrUnauthenticated = errors.New("unauthenticated")           // missing, malformed, unknown or revoked token (D22): 401
	ErrRateLimited     = errors.New("too many attempts")         // a limit is used up (D23): 429
	ErrLimiterFailed   = errors.New("rate limiter failed")       // the token is good, its limit unknown
)

// Refusal is a request Admit turns away.
type Refusal struct {
	Kind  error  // ErrNotLoaded, ErrUnauthenticated or ErrRateLimited
	Scope string // for ErrRateLimited: "token" or "address", the limit used up
	// Decision is the limit's decision for ErrRateLimited; for ErrNotLoaded its RetryAfter
	// is when the next load is due.
	Decision ratelimit.Decision
}

func (r *Refusal) Error() string { return r.Kind.Error() }
func (r *Refusal) Unwrap() error { return r.Kind }

// maxFailureKeys bounds the client addresses whose failures are remembered (the oldest is
// forgotten first): an address's log takes at most about 600 bytes at the default limit, so
// a client with a great many addresses can make the edge hold about 10 MB, no more.
const maxFailureKeys = 16384

// TokenQueryTimeout bounds one load of the token hashes, so that a hung replica delays the
// next refresh by at most this much.
const TokenQueryTimeout = 5 * time.Second

// Options are a Gate's dependencies and settings. Pool and Templates are required.
type Options struct {
	Pool      *pgxpool.Pool     // the replica, read for the token hashes: not the search's pool, so searches cannot hold a revocation back
	Templates *templates.Set    // templates.Tokens: the active tokens' hashes and own limits
	Refresh   time.Duration     // edge.token_refresh; 0: 10s
	RateLimit int               // edge.rate_limit, requests per rolling minute; 0: 60
	Limiter   ratelimit.Limiter // per token; nil: in memory
	Failures  ratelimit.Limiter // per address, failed authentications; nil: in memory
	Now       func() time.Time  // nil: time.Now; tests inject a fake clock
	Logger    *slog.Logger      // nil: slog.Default()
	// JWT verifies students' JWTs (D30); nil: only API tokens are accepted.
	JWT *JWTVerifier
}

// Gate checks API tokens against the hashes of the active tokens, and students' JWTs, and
// applies the limits.
type Gate struct {
	opts     Options
	tokens   atomic.Pointer[tokenSet] // nil until the first load succeeds
	loadedAt atomic.Int64             // Unix nanoseconds, by Options.Now, of the load of tokens
	failures ratelimit.Limiter        // failed authentications per client address

	mu      sync.Mutex // serialises refreshes and lastErr
	lastErr string     // the last load failure logged, so that a lasting one is logged once
}

// tokenSet is an immutable set of the hashes of active tokens. Each maps to how the
// token's requests are counted.
type tokenSet map[[sha256.Size]byte]tokenLimit

// tokenLimit is the limiter key of a token, the hash in hex, computed once here rather than
// per request (and never the token itself), and its limit per rolling minute.
type tokenLimit struct {
	key   string
	limit int
}

// New returns a Gate that knows no token until Start.
func New(opts Options) *Gate {
	if opts.RateLimit <= 0 {
		opts.RateLimit = 60
	}
	if opts.Refresh <= 0 {
		opts.Refresh = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Limiter == nil {
		opts.Limiter = ratelimit.NewMemory(time.Minute, opts.Now)
	}
	// Failures are limited "the same way" as tokens (D23): rate_limit in any rolling minute.
	// In memory they have a limiter of their own, bounded in keys since a client can vary
	// its address; shared (Redis), the caller passes the tokens' limiter, whose keys expire.
	if opts.Failures == nil {
		opts.Failures = ratelimit.NewMemory(time.Minute, opts.Now, ratelimit.MaxKeys(maxFailureKeys))
	}
	return &Gate{opts: opts, failures: opts.Failures}
}

// Start loads the token hashes and then reloads them every Options.Refresh until ctx is
// done, so that a revoked token stops working within that time (D22). When the replica
// cannot be read, the last set loaded stays in force.
func (g *Gate) Start(ctx context.Context) {
	_ = g.Refresh(ctx)
	go func() {
		t := time.NewTicker(g.opts.Refresh)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = g.Refresh(ctx)
			}
		}
	}()
}

// Refresh reloads the token hashes now, as the poller does, and logs a failure once while
// it lasts; it returns the failure too. On any error the set in force stays.
func (g *Gate) Refresh(ctx context.Context) error {
	err := g.refresh(ctx)
	g.logResult(err)
	return err
}

// tokenRow is a row of templates.Tokens: a token's hash and its own limit (null:
// edge.rate_limit).
type tokenRow struct {
	Hash  []byte
	Limit *int32
}

// refresh reads the hashes of the active tokens from the replica and swaps them in whole.
func (g *Gate) refresh(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, TokenQueryTimeout)
	defer cancel()
	rows, err := g.opts.Pool.Query(ctx, g.opts.Templates.SQL(templates.Tokens))
	if err != nil {
		return fmt.Errorf("query %s: %w", templates.Tokens, err)
	}
	tokens, err := pgx.CollectRows(rows, pgx.RowToStructByPos[tokenRow])
	if err != nil {
		return fmt.Errorf("read %s: %w", templates.Tokens, err)
	}
	set := make(tokenSet, len(tokens))
	for _, t := range tokens {
		// A value of another length is no SHA-256 and can match no token; skipping it
		// keeps one bad row from freezing every other token's revocation.
		if len(t.Hash) == sha256.Size {
			set[[sha256.Size]byte(t.Hash)] = tokenLimit{key: hex.EncodeToString(t.Hash), limit: g.limitOf(t)}
		}
	}
	g.tokens.Store(&set)
	g.loadedAt.Store(g.opts.Now().UnixNano())
	if skipped := len(tokens) - len(set); skipped > 0 {
		return fmt.Errorf("load token hashes: %d of %d are not 32-byte SHA-256 hashes and match no token", skipped, len(tokens))
	}
	return nil
}

// Age is how long ago the token set in force was loaded, or -1 before the first load: a
// revocation takes effect at the next load, so an age past edge.token_refresh means the
// replica cannot be read and revoked tokens still work.
func (g *Gate) Age() time.Duration {
	at := g.loadedAt.Load()
	if at == 0 {
		return -1
	}
	return g.opts.Now().Sub(time.Unix(0, at))
}

// limitOf is a token's limit: its own, or edge.rate_limit. The column's check keeps its own
// positive; a template that returns another value falls back to edge.rate_limit too.
func (g *Gate) limitOf(t tokenRow) int {
	if t.Limit != nil && *t.Limit > 0 {
		return int(*t.Limit)
	}
	return g.opts.RateLimit
}

// logResult logs a load failure once while it lasts, and the recovery from one.
func (g *Gate) logResult(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case err == nil && g.lastErr != "":
		g.opts.Logger.Info("API token hashes loaded again")
	case err != nil && err.Error() != g.lastErr && g.tokens.Load() == nil:
		g.opts.Logger.Error("API token refresh failed; no API token set is loaded yet: requests with an API token get 503 until one loads (a student's JWT is served)",
			"error", err)
	case err != nil && err.Error() != g.lastErr:
		g.opts.Logger.Error("API token refresh failed; the last token set stays in force", "error", err)
	}
	g.lastErr = ""
	if err != nil {
		g.lastErr = err.Error()
	}
}

// Admission is a request Admit let through: its limit's decision (its Limit and Remaining
// are for the response's headers) and, for a student's JWT, the student (D31).
type Admission struct {
	ratelimit.Decision
	Student string // empty for an API token
}

// Admit decides whether a request with header h from the client address addr goes on: it
// needs an active API token or, when Options.JWT is set, a valid JWT (D30), within its
// limit: the token's, or the student's (D33). It returns the Admission, or a *Refusal, or
// an error wrapping ErrLimiterFailed when the limiter could not decide: the token was
// checked and only the limit is unknown, and the caller fails open, since a limiter that
// cannot decide (a shared Redis down) must not take the whole API down with it.
//
// The token is looked up first, and only failures count against the client's address
// (failureKey): a valid token is never refused for its address's failures, so an
// anonymous flood from behind the same NAT, or through a load balancer the edge does not
// trust, cannot lock out the clients sharing the address. That a limited address still
// learns when a guess was right gives a guesser nothing: at the address's allowance a
// token's 128 random bits are out of reach, and so is a JWT's signature.
func (g *Gate) Admit(ctx context.Context, h http.Header, addr string) (Admission, error) {
	token, ok := bearerToken(h)
	if ok && g.opts.JWT != nil && LooksLikeJWT(token) {
		// Needs no token set: students are served before the token hashes first load.
		return g.admitStudent(ctx, token, addr)
	}
	set := g.tokens.Load()
	if set == nil {
		// Not 401: the token may well be good, and clients must not drop it.
		return Admission{}, &Refusal{Kind: ErrNotLoaded, Decision: ratelimit.Decision{RetryAfter: g.opts.Refresh}}
	}
	tl, found := set.lookup(token)
	if !ok || !found {
		return g.failed(ctx, addr)
	}
	return g.limit(ctx, tl.key, tl.limit, "")
}

// admitStudent admits a request with a valid JWT, within the student's limit. The
// address's failed authentications are looked at first, without counting: one that has
// used up its allowance still has its valid JWTs admitted (D44), but only with the keys
// held, so that it cannot make the edge fetch the JWKS.
func (g *Gate) admitStudent(ctx context.Context, token, addr string) (Admission, error) {
	verify := g.opts.JWT.Verify
	if d, err := g.failures.Peek(ctx, failureKey(addr), g.opts.RateLimit); err == nil && !d.Allowed {
		verify = g.opts.JWT.VerifyWithKeysHeld
	}
	student, err := verify(ctx, token)
	if err != nil {
		return g.failed(ctx, addr)
	}
	return g.limit(ctx, studentKey(student), g.opts.RateLimit, student)
}

// limit counts the request against key, at limit per rolling minute (D23).
func (g *Gate) limit(ctx context.Context, key string, limit int, student string) (Admission, error) {
	d, err := g.opts.Limiter.Allow(ctx, key, limit)
	if err != nil {
		return Admission{Decision: d, Student: student}, fmt.Errorf("%w: %w", ErrLimiterFailed, err)
	}
	if !d.Allowed {
		return Admission{Decision: d}, &Refusal{Kind: ErrRateLimited, Scope: "token", Decision: d}
	}
	return Admission{Decision: d, Student: student}, nil
}

// studentKey is what a student's requests count against, in the limiter's key space beside
// the tokens' hex hashes: "jwt:" and the student, or a hash of a student claim so long that
// the limiter (maybe a shared Redis) should not hold it.
func studentKey(student string) string {
	if len(student) <= 64 {
		return "jwt:" + student
	}
	sum := sha256.Sum256([]byte(student))
	return "jwt#" + hex.EncodeToString(sum[:16])
}

// failed counts a failed authentication against the client's address and refuses it: 401,
// or 429 once the address has used up its allowance of failures (D23).
func (g *Gate) failed(ctx context.Context, addr string) (Admission, error) {
	d, err := g.failures.Allow(ctx, failureKey(addr), g.opts.RateLimit)
	if err == nil && !d.Allowed {
		return Admission{Decision: d}, &Refusal{Kind: ErrRateLimited, Scope: "address", Decision: d}
	}
	// The in-memory limiter never fails; should a shared one, the 401 still stands.
	return Admission{}, &Refusal{Kind: ErrUnauthenticated}
}

// Stray counts a request that reached no endpoint (an unknown path outside /public, a
// method the edge refuses) and refuses it with a *Refusal once its allowance is used up.
// Such requests need no token: unbounded, they would be answered, and logged, as fast as
// anyone can send them. One with a valid token or JWT counts against that token or student
// (Admit), never against its address (D44): a client with a good token must not get everyone
// behind its address refused. Any other counts against its address like a failed
// authentication, and is answered (nil) while the address is within its allowance. The
// Admission holds the token's or student's decision when one was counted (its Limit is
// then positive), for the answer's X-RateLimit headers (D23).
func (g *Gate) Stray(ctx context.Context, h http.Header, addr string) (Admission, error) {
	if _, ok := bearerToken(h); !ok {
		return Admission{}, g.CountAddress(ctx, addr)
	}
	a, err := g.Admit(ctx, h, addr) // an invalid credential is counted against addr there
	var r *Refusal
	switch {
	case err == nil:
		return a, nil
	case errors.Is(err, ErrLimiterFailed) || errors.Is(err, ErrUnauthenticated):
		return Admission{}, nil
	case errors.As(err, &r) && r.Kind == ErrNotLoaded:
		// The token cannot be checked yet: counted as anonymous.
		return Admission{}, g.CountAddress(ctx, addr)
	}
	return Admission{}, err
}

// CountAddress counts an anonymous request against its address's allowance of failures,
// and refuses it with a *Refusal once that is used up: a stray request without a valid
// credential, or a CORS preflight, which never carries one (D44).
func (g *Gate) CountAddress(ctx context.Context, addr string) error {
	if d, err := g.failures.Allow(ctx, failureKey(addr), g.opts.RateLimit); err == nil && !d.Allowed {
		return &Refusal{Kind: ErrRateLimited, Scope: "address", Decision: d}
	}
	return nil
}

// failureKey is what a client address's failures count against: an IPv4 address (also when
// written as IPv4-mapped IPv6), or an IPv6 address's /64, the smallest block networks hand
// a client (RFC 6177), which a client can otherwise spread its guesses over.
func failureKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	if a = a.Unmap(); a.Is6() {
		return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
	}
	return a.String()
}

// lookup returns the limiter key and limit of the active token.
func (set *tokenSet) lookup(token string) (tokenLimit, bool) {
	// Valid refuses a mistyped or made-up token by its checksum without a lookup. The
	// lookup itself is of the token's SHA-256, so its timing reveals nothing usable about
	// the token.
	if !apitoken.Valid(token) {
		return tokenLimit{}, false
	}
	tl, ok := (*set)[apitoken.Sum(token)]
	return tl, ok
}

// bearerToken returns the token of the one Authorization header (D21): the scheme
// "Bearer" in any case, spaces, then exactly one token. Nothing else of the request is read,
// so a token in the query string never counts.
func bearerToken(h http.Header) (string, bool) {
	v := h["Authorization"]
	if len(v) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(v[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	// Two IndexByte scans: ContainsAny builds its set of characters on every call.
	if token == "" || strings.IndexByte(token, ' ') >= 0 || strings.IndexByte(token, '\t') >= 0 {
		return "", false
	}
	return token, true
}
