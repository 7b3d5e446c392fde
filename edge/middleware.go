package edge

import (
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// allowedMethod reports whether the request's method gets past the front middleware: GET
// and HEAD, and OPTIONS when CORS is configured (the browsers' preflight, answered by cors).
// Every other method gets 405 with Allow: GET, HEAD (D24), whether the path exists or not.
func (s *Server) allowedMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodOptions:
		return len(s.cfg.CORSOrigins) > 0
	}
	return false
}

// call runs next and turns a panic in it into a 500 with the usual JSON body; the error
// handler logs it, with the stack, once. http.ErrAbortHandler is re-raised: it is how a
// handler asks net/http to drop the connection.
func (s *Server) call(c echo.Context, next echo.HandlerFunc) (err error) {
	defer s.recovered(c, &err)
	return next(c)
}

// recovered is call's deferred half, a method rather than a closure so that a request
// that does not panic allocates nothing for it.
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

// nosniff is the header value of X-Content-Type-Options (D25), shared like document headers.
var nosniff = header("nosniff")

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
