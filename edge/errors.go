package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/edge/search"
	"github.com/trainingco/catalogue/edge/telemetry"
)

// Sentinel kinds of failure. Handlers return an error made with fail(kind, ...), or a
// *search.Error of one of search's kinds; the single error handler maps the kind to a
// status through statusOf and writes {"message": ...}.
var (
	ErrBadRequest      = errors.New("bad request")         // malformed query parameter (D13)
	ErrNotFound        = errors.New("not found")           // unknown path, id or non-public item (D15, D24)
	ErrUnauthenticated = errors.New("unauthenticated")     // missing, malformed, unknown or revoked token (D22)
	ErrRateLimited     = errors.New("too many attempts")   // over the limit (D23)
	ErrUnavailable     = errors.New("service unavailable") // no snapshot or token set yet, or the replica is down or slow
	ErrMethod          = errors.New("method not allowed")  // anything but GET and HEAD (D24)
	ErrHeaderTooLarge  = errors.New("header too large")    // request head over MaxRequestHead (D46)
)

// statusOf is the one table from kind to HTTP status.
var statusOf = map[error]int{
	ErrBadRequest:        http.StatusBadRequest,
	ErrNotFound:          http.StatusNotFound,
	ErrUnauthenticated:   http.StatusUnauthorized,
	ErrRateLimited:       http.StatusTooManyRequests,
	ErrUnavailable:       http.StatusServiceUnavailable,
	ErrMethod:            http.StatusMethodNotAllowed,
	ErrHeaderTooLarge:    http.StatusRequestHeaderFieldsTooLarge,
	search.ErrBadRequest: http.StatusBadRequest,          // limit or page not an integer (D9)
	search.ErrBadDate:    http.StatusInternalServerError, // start/end/date not MM-DD-YYYY (D8: 500 by contract)
}

// clientError is a failure the client is told about: its kind picks the status, msg is the
// body's message, and cause (never shown to the client) is logged.
type clientError struct {
	kind  error
	msg   string
	cause error
}

func (e *clientError) Error() string {
	if e.cause != nil {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

func (e *clientError) Unwrap() []error { return []error{e.kind, e.cause} }

// fail returns an error of kind whose message the client sees.
func fail(kind error, format string, args ...any) error {
	return &clientError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// failCause is fail with an underlying cause that is logged but not shown.
func failCause(kind, cause error, format string, args ...any) error {
	return &clientError{kind: kind, msg: fmt.Sprintf(format, args...), cause: cause}
}

// hdrNoStore is the Cache-Control of every error and of the probes' answers.
var hdrNoStore = header("no-store")

// handleError is Echo's HTTPErrorHandler: every error body is {"message": ...} as JSON (D24).
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "Server Error"
	var ce *clientError
	var se *search.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ce):
		status, msg = statusOf[ce.kind], ce.msg
	case errors.As(err, &se):
		status, msg = statusOf[se.Kind], se.Message
	case errors.As(err, &he) && he.Code == http.StatusNotFound:
		status, msg = http.StatusNotFound, "Not Found."
	case errors.As(err, &he) && he.Code == http.StatusMethodNotAllowed:
		status, msg = http.StatusMethodNotAllowed, "Method Not Allowed."
	}
	h := c.Response().Header()
	if status == http.StatusMethodNotAllowed {
		h.Set("Allow", "GET, HEAD")
	}
	// No cache may keep an error (D45): a CDN would answer a 404 or a 503 for its default
	// lifetime after the cause is gone.
	h["Cache-Control"] = hdrNoStore
	if errors.Is(err, errNotReady) {
		// A probe while the edge starts: expected, and asked every few seconds.
		s.log.Debug("not ready", "path", c.Request().URL.Path, "reason", msg)
	} else if status >= 500 && !errors.Is(err, search.ErrBadDate) {
		s.log.Error("request failed", "status", status, "method", c.Request().Method,
			"path", telemetry.LoggedPath(c.Request().URL.Path), "request_id", h.Get(echo.HeaderXRequestID), "error", err)
	}
	writeError(c, status, msg)
}

// writeError writes {"message": msg} as JSON, as Echo's c.JSON would, with its
// Content-Length; HEAD gets the same headers without the body (RFC 9110 9.3.2).
func writeError(c echo.Context, status int, msg string) {
	body, err := json.Marshal(map[string]string{"message": msg})
	if err != nil { // a map of strings always encodes; this only keeps the status right
		body = []byte(`{"message":"Server Error"}`)
	}
	body = append(body, '\n')
	res := c.Response()
	h := res.Header()
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	res.WriteHeader(status)
	if c.Request().Method != http.MethodHead {
		_, _ = res.Write(body) // a failed write means the client has gone
	}
}
