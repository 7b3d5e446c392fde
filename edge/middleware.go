package edge

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/trainingco/catalogue/edge/telemetry"
)

// front is the one middleware every request passes, first. It gives the request an id and
// the security headers (D25), refuses every method but GET and HEAD (D24), recovers from
// panics, writes any error through the error handler, and then counts and times the
// request and writes one log line for it: it runs the error handler itself because the
// status is only known once the error has been written.
//
// Echo routes before it runs, but nothing before the handler depends on the route: a
// refused method gets its 405 whether the path exists or not, and is counted as unmatched.
//
// The line holds the method, the route pattern, the path without its query string, the
// status, the bytes of the body, the duration, the request id and the client's address.
// The query string is left out because search text is what people typed; the
// Authorization header and bodies are never logged, so neither is a token.
func (s *Server) front(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s.serveFront(c, next)
		return nil
	}
}

// serveFront is front's work, in a method so that front's closure holds only next.
func (s *Server) serveFront(c echo.Context, next echo.HandlerFunc) {
	start := time.Now() // wall time, not s.now: tests' fake clocks do not tick
	req, res := c.Request(), c.Response()
	h := res.Header()
	id := s.requestID(req.Header)
	h[echo.HeaderXRequestID] = id
	h["X-Content-Type-Options"] = nosniff // set before the handler, so errors carry it too
	pattern := ""
	var err error
	switch {
	case headBytes(req) > MaxRequestHead:
		// Counted like any request that reaches no endpoint (D44): against its token, or
		// its address without one.
		err = s.stray(c, fail(ErrHeaderTooLarge, "Request Header Fields Too Large."))
	case req.Method == http.MethodGet || req.Method == http.MethodHead:
		err = s.call(c, next)
		pattern = c.Path()
	case s.preflight(req):
		// Counted against the address like any anonymous request (D44), then answered by cors.
		if err = s.countPreflight(c); err == nil {
			err = s.call(c, next)
			pattern = c.Path()
		}
	default:
		err = s.stray(c, fail(ErrMethod, "Method Not Allowed."))
	}
	if err != nil {
		c.Error(err)
	}
	end := time.Now()
	d := end.Sub(start)
	s.reqLog.Write(req.Context(), end, &telemetry.RequestLine{
		Method:   telemetry.LoggedValue(req.Method),
		Route:    s.metrics.Observe(pattern, res.Status, d),
		Path:     telemetry.LoggedPath(req.URL.Path),
		Status:   res.Status,
		Bytes:    res.Size,
		Duration: d,
		ID:       id[0],
		Addr:     clientAddr(c),
	})
}

// MaxRequestHead bounds a request's line and headers (D46): past it the answer is 431, as
// JSON like every error, before any handler runs. The HTTP server's own bound
// (http.Server.MaxHeaderBytes, which answers in plain text) must be larger.
const MaxRequestHead = 32 << 10

// headBytes is the size of req's request line and header lines as sent, a header sent
// twice counted twice (net/http keeps Host apart from the other headers). It does not
// allocate.
func headBytes(req *http.Request) int {
	n := len(req.Method) + len(req.RequestURI) + len(req.Proto) + len("  \r\nHost: \r\n\r\n") + len(req.Host)
	for k, vs := range req.Header {
		for _, v := range vs {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return n
}

// requestID returns the request's id as the header value of the response: the client's
// when it is sane (telemetry.RequestIDs.FromClient), else a new one (headerText).
func (s *Server) requestID(h http.Header) []string {
	if id, ok := s.ids.FromClient(h); ok {
		return id
	}
	v := new(headerText)
	id, _ := v.values(s.ids.AppendNew(v.buf[:0]), -1)
	return id
}

// preflight reports whether req is a CORS preflight the front middleware lets through to
// cors: an OPTIONS with Origin and Access-Control-Request-Method, when CORS is configured.
// Any other OPTIONS, like every method but GET and HEAD, gets 405 with Allow: GET, HEAD
// (D24), whether the path exists or not.
func (s *Server) preflight(req *http.Request) bool {
	return req.Method == http.MethodOptions && len(s.cfg.CORSOrigins) > 0 &&
		req.Header.Get(echo.HeaderOrigin) != "" && req.Header.Get(echo.HeaderAccessControlRequestMethod) != ""
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
		s.log.Error("panic after the response started", "method", telemetry.LoggedValue(c.Request().Method),
			"path", telemetry.LoggedPath(c.Request().URL.Path), "error", *err)
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
