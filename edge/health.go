package edge

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// noStore wraps a handler whose answers no cache may keep: the metrics.
func (s *Server) noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header()["Cache-Control"] = hdrNoStore
		return next(c)
	}
}

// handleHealthz answers 200 while the process runs; liveness probes call it (D26).
func (s *Server) handleHealthz(c echo.Context) error {
	c.Response().Header()["Cache-Control"] = hdrNoStore // a probe asks about now
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 with the snapshot being served once one is loaded, and 503
// before: load balancers and readiness probes call it (D26). The database does not count:
// without it only the search fails, and every static read still works.
func (s *Server) handleReadyz(c echo.Context) error {
	snap := s.docs.Current()
	if snap == nil {
		return fail(ErrUnavailable, "No catalogue snapshot is loaded yet.")
	}
	c.Response().Header()["Cache-Control"] = hdrNoStore
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "snapshot": snap.ID()})
}
