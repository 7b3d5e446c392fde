package edge

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/edge/auth"
)

// handleStray answers a path outside /public that is no endpoint: 404 (D24), or 429 once
// the client's address has used up its allowance of failures (stray).
func (s *Server) handleStray(c echo.Context) error {
	return s.stray(c, fail(ErrNotFound, "Not Found."))
}

// stray counts a request that reached no endpoint against its client's address
// (auth.Gate.Stray) and returns its answer: answer itself, or the refusal once the
// address is over its allowance. Only anonymous traffic is bounded so: under /public an
// unknown path is answered to a valid token only, and counted like any request of it.
func (s *Server) stray(c echo.Context, answer error) error {
	err := s.auth.Stray(c.Request().Context(), clientAddr(c))
	var r *auth.Refusal
	if errors.As(err, &r) {
		return s.refuse(c, r)
	}
	return answer
}
