package edge

import (
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// rejectMethods answers 405 with Allow: GET, HEAD to every method but GET and HEAD (D24).
// It runs before routing, so the answer does not depend on whether the path exists. When
// CORS is configured, OPTIONS passes too: it is the browsers' preflight, answered by cors.
// The other middleware has not run yet, so it sets nosniff itself (D25).
func (s *Server) rejectMethods(next echo.HandlerFunc) echo.HandlerFunc {
	corsOn := len(s.cfg.CORSOrigins) > 0
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead:
			return next(c)
		case http.MethodOptions:
			if corsOn {
				return next(c)
			}
		}
		c.Response().Header()["X-Content-Type-Options"] = nosniff
		return fail(ErrMethod, "Method Not Allowed.")
	}
}

// recoverJSON turns a panic in any later handler into a 500 with the usual JSON body; the
// error handler logs it, with the stack, once. http.ErrAbortHandler is re-raised: it is
// how a handler asks net/http to drop the connection.
func (s *Server) recoverJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer s.recovered(c, &err)
		return next(c)
	}
}

// recovered is recoverJSON's deferred half, a method rather than a closure so that a
// request that does not panic allocates nothing for it.
func (s *Server) recovered(c echo.Context, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if r == http.ErrAbortHandler {
		panic(r)
	}
	*err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
	if c.Response().Committed {
		// The error handler cannot answer any more, and so does not log either.
		s.log.Error("panic after the response started", "method", c.Request().Method,
			"path", loggedPath(c.Request().URL.Path), "error", *err)
		*err = nil
	}
}

// nosniff is the header value of X-Content-Type-Options, shared like document headers.
var nosniff = header("nosniff")

// securityHeaders sets X-Content-Type-Options: nosniff on every response that passes
// routing, errors included (D25): it is set before the handler runs, so the error handler
// writes it too.
func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header()["X-Content-Type-Options"] = nosniff
		return next(c)
	}
}

// cors lets the browsers of edge.cors_origins call the API: tokens travel in the
// Authorization header, which needs a preflight, and clients read the ETag, the snapshot id
// and the rate-limit headers. Without configured origins it does nothing, and browsers keep
// their same-origin rule.
func (s *Server) cors() echo.MiddlewareFunc {
	if len(s.cfg.CORSOrigins) == 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	return middleware.CORSWithConfig(middleware.CORSConfig{
		AllowOrigins: s.cfg.CORSOrigins,
		AllowMethods: []string{http.MethodGet, http.MethodHead},
		AllowHeaders: []string{echo.HeaderAuthorization, "If-None-Match"},
		ExposeHeaders: []string{"ETag", "X-Catalogue-Snapshot", "X-RateLimit-Limit",
			"X-RateLimit-Remaining", "X-RateLimit-Reset", echo.HeaderRetryAfter},
		MaxAge: 600, // seconds a browser may reuse a preflight answer
	})
}
