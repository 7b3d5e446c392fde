package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/edge/ratelimit"
	"github.com/trainingco/catalogue/templates"
)

// Response headers of the token check and the limits (D22, D23), in Go's canonical form so
// that they can be set without canonicalising on every request.
const (
	hdrWWWAuthenticate = "Www-Authenticate"
	hdrLimit           = "X-Ratelimit-Limit"
	hdrRemaining       = "X-Ratelimit-Remaining"
	hdrReset           = "X-Ratelimit-Reset"
	hdrRetryAfter      = "Retry-After"
)

// tokenQueryTimeout bounds one load of the token hashes, so that a hung replica delays the
// next refresh by at most this much.
const tokenQueryTimeout = 5 * time.Second

var bearer = header("Bearer")

// authenticator checks API tokens against the hashes of the active tokens, held in memory
// so that the request path never queries the database, and applies two limits: per token
// on every authenticated request, and per client address on failed authentication.
type authenticator struct {
	s        *Server
	every    time.Duration            // edge.token_refresh
	tokens   atomic.Pointer[tokenSet] // nil until the first load succeeds
	failures ratelimit.Limiter        // failed authentications per client address
	retry    []string                 // Retry-After of a 503 before the first load

	mu      sync.Mutex // serialises refreshes and lastErr
	lastErr string     // the last load failure logged, so that a lasting one is logged once
}

// tokenSet is an immutable set of the hashes of active tokens. Each maps to the key the
// token's requests are counted under: the hash in hex, computed once here rather than per
// request, and never the token itself.
type tokenSet map[[sha256.Size]byte]string

// newAuthenticator returns the token check of s; it knows no token until start.
func newAuthenticator(s *Server) *authenticator {
	// Failures are limited "the same way" as tokens (D23): rate_limit in any rolling minute.
	// They stay in memory even when tokens share a limiter between edges: each edge then
	// allows an address its own allowance, which still keeps guessing slow.
	limit := s.cfg.RateLimit
	if limit <= 0 {
		limit = 60
	}
	every := s.cfg.TokenRefresh
	if every <= 0 {
		every = 10 * time.Second
	}
	return &authenticator{s: s, every: every, failures: ratelimit.NewMemory(limit, time.Minute, s.now),
		retry: header(strconv.FormatInt(ceilSeconds(every), 10))}
}

// start loads the token hashes and then reloads them every edge.token_refresh until ctx
// is done, so that a revoked token stops working within that time (D22). When the replica
// cannot be read, the last set loaded stays in force.
func (a *authenticator) start(ctx context.Context) {
	a.logResult(a.refresh(ctx))
	go func() {
		t := time.NewTicker(a.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.logResult(a.refresh(ctx))
			}
		}
	}()
}

// refresh reads the hashes of the active tokens from the replica and swaps them in whole.
// On any error the set in force stays.
func (a *authenticator) refresh(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, tokenQueryTimeout)
	defer cancel()
	rows, err := a.s.opts.Replica.Query(ctx, a.s.opts.Templates.SQL(templates.Tokens))
	if err != nil {
		return fmt.Errorf("query %s: %w", templates.Tokens, err)
	}
	hashes, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return fmt.Errorf("read %s: %w", templates.Tokens, err)
	}
	set := make(tokenSet, len(hashes))
	for _, h := range hashes {
		// A value of another length is no SHA-256 and can match no token; skipping it
		// keeps one bad row from freezing every other token's revocation.
		if len(h) == sha256.Size {
			set[[sha256.Size]byte(h)] = hex.EncodeToString(h)
		}
	}
	a.tokens.Store(&set)
	if skipped := len(hashes) - len(set); skipped > 0 {
		return fmt.Errorf("load token hashes: %d of %d are not 32-byte SHA-256 hashes and match no token", skipped, len(hashes))
	}
	return nil
}

// logResult logs a load failure once while it lasts, and the recovery from one.
func (a *authenticator) logResult(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err == nil && a.lastErr != "":
		a.s.log.Info("API token hashes loaded again")
	case err != nil && err.Error() != a.lastErr:
		a.s.log.Error("API token refresh failed; the last token set stays in force",
			"loaded", a.tokens.Load() != nil, "error", err)
	}
	a.lastErr = ""
	if err != nil {
		a.lastErr = err.Error()
	}
}

// middleware admits a request with an active token and within its token's limit.
//
// An address that has used up its allowance of failed authentications gets 429 before its
// token is even looked at: answering a valid token normally would tell a guesser which
// guess was right, at full speed. The cost is that clients sharing an address with a
// guesser wait with it, which is why the address is the direct peer unless Echo is given
// an IPExtractor that trusts a proxy (clientAddr).
func (a *authenticator) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		set := a.tokens.Load()
		if set == nil {
			// Not 401: the token may well be good, and clients must not drop it.
			c.Response().Header()[hdrRetryAfter] = a.retry
			return fail(ErrUnavailable, "The token list is not loaded yet. Try again shortly.")
		}
		ctx := c.Request().Context()
		addr := clientAddr(c)
		if d, err := a.failures.Peek(ctx, addr); err == nil && !d.Allowed {
			return a.tooMany(c, d, "address")
		}
		key, ok := set.lookup(c.Request().Header)
		if !ok {
			return a.unauthenticated(c, addr)
		}
		return a.limit(c, key, next)
	}
}

// lookup returns the limiter key of the active token in the Authorization header.
func (set *tokenSet) lookup(h http.Header) (string, bool) {
	token, ok := bearerToken(h)
	// Valid refuses a mistyped or made-up token by its checksum without a lookup. The
	// lookup itself is of the token's SHA-256, so its timing reveals nothing usable about
	// the token.
	if !ok || !apitoken.Valid(token) {
		return "", false
	}
	key, ok := (*set)[apitoken.Sum(token)]
	return key, ok
}

// bearerToken returns the token of the one Authorization header (D21): the scheme
// "Bearer" in any case, spaces, then exactly one token. Nothing else of the request is read,
// so a token in the query string never counts.
func bearerToken(h http.Header) (string, bool) {
	v := h[echo.HeaderAuthorization]
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

// unauthenticated answers 401 (D22) and counts the failure against the client's address;
// once the address has used up its allowance the answer is 429 instead (D23).
func (a *authenticator) unauthenticated(c echo.Context, addr string) error {
	d, err := a.failures.Allow(c.Request().Context(), addr)
	if err == nil && !d.Allowed {
		return a.tooMany(c, d, "address")
	}
	// The in-memory limiter never fails; should a shared one, the 401 still stands.
	a.s.metrics.unauthenticated.Inc()
	c.Response().Header()[hdrWWWAuthenticate] = bearer
	return fail(ErrUnauthenticated, "Unauthenticated.")
}

// limit counts the request against its token (D23): every answer carries the limit and
// what remains, and a request over the limit gets 429 with when to retry.
func (a *authenticator) limit(c echo.Context, key string, next echo.HandlerFunc) error {
	d, err := a.s.opts.Limiter.Allow(c.Request().Context(), key)
	if err != nil {
		// Fail open: a limiter that cannot decide (a shared Redis down) must not take the
		// whole API down with it. The token was checked; only the limit is skipped.
		a.s.log.Warn("rate limiter failed; request let through", "request_id",
			c.Response().Header().Get(echo.HeaderXRequestID), "error", err)
		return next(c)
	}
	h := c.Response().Header()
	v := new(headerText)
	t := strconv.AppendInt(v.buf[:0], int64(d.Limit), 10)
	n := len(t)
	h[hdrLimit], h[hdrRemaining] = v.values(strconv.AppendInt(t, int64(d.Remaining), 10), n)
	if !d.Allowed {
		return a.tooMany(c, d, "token")
	}
	return next(c)
}

// tooMany answers 429 with Retry-After in whole seconds and X-RateLimit-Reset as the Unix
// time, rounded up, at which a request would be accepted (D23).
func (a *authenticator) tooMany(c echo.Context, d ratelimit.Decision, scope string) error {
	a.s.metrics.limited(scope)
	h := c.Response().Header()
	h[hdrRetryAfter] = []string{strconv.FormatInt(ceilSeconds(d.RetryAfter), 10)}
	h[hdrReset] = []string{strconv.FormatInt(ceilUnix(d.ResetAt), 10)}
	return fail(ErrRateLimited, "Too Many Attempts.")
}

// ceilSeconds is d in whole seconds, rounded up and at least one.
func ceilSeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// ceilUnix is t in Unix seconds rounded up, so that a client waiting until then is accepted.
func ceilUnix(t time.Time) int64 {
	if t.Nanosecond() > 0 {
		return t.Unix() + 1
	}
	return t.Unix()
}

// directAddr is the host of the connection's remote address.
var directAddr = echo.ExtractIPDirect()

// clientAddr is the address failed authentications are counted against: the direct peer,
// unless the server's Echo was given an IPExtractor (one that trusts a known proxy's
// X-Forwarded-For, say). Echo without an extractor believes X-Forwarded-For from anyone,
// which would let a guesser claim a fresh address on every request.
func clientAddr(c echo.Context) string {
	if c.Echo().IPExtractor != nil {
		return c.RealIP()
	}
	return directAddr(c.Request())
}
