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

// stray counts a request that reached no endpoint against its client's address, or against
// its token or student when it carries a valid one (auth.Gate.Stray, D44), and returns its
// answer: answer itself, with the token's X-RateLimit headers (D23), or the refusal once
// that allowance is used up. Under /public an unknown path is answered to a valid token
// only, and counted like any request of it.
func (s *Server) stray(c echo.Context, answer error) error {
	req := c.Request()
	a, err := s.auth.Stray(req.Context(), req.Header, clientAddr(c))
	if err == nil && a.Limit > 0 {
		s.setLimitHeaders(c, a.Decision)
	}
	return s.refusedOr(c, err, answer)
}

// countPreflight counts a CORS preflight against its client's address like any anonymous
// request (D44), and returns nil while the address is within its allowance.
func (s *Server) countPreflight(c echo.Context) error {
	return s.refusedOr(c, s.auth.CountAddress(c.Request().Context(), clientAddr(c)), nil)
}

// refusedOr answers a refusal of auth, or returns answer.
func (s *Server) refusedOr(c echo.Context, err, answer error) error {
	var r *auth.Refusal
	if errors.As(err, &r) {
		return s.refuse(c, r)
	}
	return answer
}
