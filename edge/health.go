package edge

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleHealthz answers 200 while the process runs; liveness probes call it (D26).
func (s *Server) handleHealthz(c echo.Context) error {
	c.Response().Header()["Cache-Control"] = hdrNoStore // a probe asks about now
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// errNotReady is the cause of /readyz's 503: a probe that finds the edge not ready yet is
// expected while it starts, and is logged at debug, not as a failed request.
var errNotReady = errors.New("not ready")

// handleReadyz answers 200 with the snapshot being served once the edge can serve a request:
// a snapshot and the token set are loaded; 503 before (D26). Load balancers and readiness
// probes call it. An edge whose replica cannot be read at start has no token set and would
// refuse every authenticated request, so it is not ready. Neither the search index, Redis
// nor the JWKS count: without them the search runs in the replica, limits are counted in
// memory and students' JWTs are refused, while every API token's request is served.
func (s *Server) handleReadyz(c echo.Context) error {
	if s.draining.Load() {
		return failCause(ErrUnavailable, errNotReady, "The server is shutting down.")
	}
	snap := s.docs.Current()
	if snap == nil {
		return failCause(ErrUnavailable, errNotReady, "No catalogue snapshot is loaded yet.")
	}
	if s.auth.Age() < 0 {
		return failCause(ErrUnavailable, errNotReady, "The token list is not loaded yet.")
	}
	c.Response().Header()["Cache-Control"] = hdrNoStore
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "snapshot": snap.ID()})
}

// Drain makes /readyz answer 503 from now on, while every other request is served as
// before: the edge, told to stop, is taken out of rotation by its load balancer before it
// stops accepting connections (edge.shutdown_delay).
func (s *Server) Drain() { s.draining.Store(true) }
