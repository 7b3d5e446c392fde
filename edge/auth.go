package edge

import (
	"errors"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/ratelimit"
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

var bearer = header("Bearer")

// requireToken admits a request with an active token or a student's valid JWT, within its
// limit (auth.Gate.Admit), and answers the others: 401, 429 or, before the token set is
// loaded, 503. Every answer to a token within or over its limit carries the limit and what
// remains. The student a JWT names is kept in the context under studentKey.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a, err := s.auth.Admit(c.Request().Context(), c.Request().Header, clientAddr(c))
		if a.Student != "" {
			c.Set(studentKey, a.Student) // for the class read (D32)
		}
		if err != nil {
			return s.notAdmitted(c, err, next)
		}
		s.setLimitHeaders(c, a.Decision)
		return next(c)
	}
}

// notAdmitted answers a request Admit did not admit: a refusal, or a limiter that could not
// decide, in which case the request goes on, since the token was checked and only the
// limit is skipped.
func (s *Server) notAdmitted(c echo.Context, err error, next echo.HandlerFunc) error {
	var r *auth.Refusal
	if errors.As(err, &r) {
		return s.refuse(c, r)
	}
	s.log.Warn("rate limiter failed; request let through", "request_id",
		c.Response().Header().Get(echo.HeaderXRequestID), "error", err)
	return next(c)
}

// setLimitHeaders sets X-RateLimit-Limit and X-RateLimit-Remaining (headerText).
func (s *Server) setLimitHeaders(c echo.Context, d ratelimit.Decision) {
	v := new(headerText)
	t := strconv.AppendInt(v.buf[:0], int64(d.Limit), 10)
	n := len(t)
	h := c.Response().Header()
	h[hdrLimit], h[hdrRemaining] = v.values(strconv.AppendInt(t, int64(d.Remaining), 10), n)
}

// refuse answers a request auth refused.
func (s *Server) refuse(c echo.Context, r *auth.Refusal) error {
	h := c.Response().Header()
	switch r.Kind {
	case auth.ErrNotLoaded:
		// Not 401: the token may well be good, and clients must not drop it.
		h[hdrRetryAfter] = []string{strconv.FormatInt(ceilSeconds(r.Decision.RetryAfter), 10)}
		return fail(ErrUnavailable, "The token list is not loaded yet. Try again shortly.")
	case auth.ErrUnauthenticated:
		s.metrics.Unauthenticated()
		h[hdrWWWAuthenticate] = bearer
		return fail(ErrUnauthenticated, "Unauthenticated.")
	}
	// Too many: with Retry-After in whole seconds and X-RateLimit-Reset as the Unix time,
	// rounded up, at which a request would be accepted (D23).
	if r.Scope == "token" {
		s.setLimitHeaders(c, r.Decision)
	}
	s.metrics.Limited(r.Scope)
	h[hdrRetryAfter] = []string{strconv.FormatInt(ceilSeconds(r.Decision.RetryAfter), 10)}
	h[hdrReset] = []string{strconv.FormatInt(ceilUnix(r.Decision.ResetAt), 10)}
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
