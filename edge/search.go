package edge

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/cork"
	"github.com/trainingco/catalogue/edge/search"
)

// handleSearch serves GET /public/classes and GET /public/course/:id/classes. A path id that
// is not a positive integer is 404 (D15); an unknown or non-public course is simply a course
// with no matching class, hence the empty result (spec 4.4), one past int64 included.
func (s *Server) handleSearch(c echo.Context) error {
	var courseID int64
	var noCourse bool
	if hasParam(c, "id") {
		id, none, ok := parseSearchCourseID(c.Param("id"))
		if !ok {
			return fail(ErrNotFound, "Course not found.")
		}
		courseID, noCourse = id, none
	}
	p, err := search.ParseParams(queryParams(c))
	if err != nil {
		return err
	}
	if noCourse { // the parameters are still checked: a bad one is the same error as anywhere
		return writeSearch(c, search.Empty(), s.searchCacheControl)
	}
	p.CourseID = courseID
	today := config.Today(s.now(), s.loc)
	res, err := s.search.Search(c.Request().Context(), today, p)
	if err != nil {
		return failCause(ErrUnavailable, err, "The class search is temporarily unavailable. Please try again shortly.")
	}
	return writeSearch(c, res, s.searchCacheControl)
}

// hasParam reports whether the matched route has the path parameter name.
func hasParam(c echo.Context, name string) bool {
	for _, n := range c.ParamNames() {
		if n == name {
			return true
		}
	}
	return false
}

// writeSearch sends a 200 JSON body computed live: gzip-compressed when the client accepts
// it, with Vary: Accept-Encoding and the Content-Length of what is sent (D25), and headers
// only for HEAD. It carries no validator: the body depends on "today" and on the database.
// cacheControl lets a private cache reuse it for as long as the edge reuses it itself
// (edge.search_cache), which the partner's guide (openapi.json) tells callers to do.
func writeSearch(c echo.Context, res search.Result, cacheControl []string) error {
	req, w := c.Request(), c.Response()
	hdr := w.Header()
	hdr.Add("Vary", echo.HeaderAcceptEncoding)
	hdr.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	hdr["Cache-Control"] = cacheControl
	body := res.Body()
	if acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding)) {
		body = res.Gzip()
		hdr.Set(echo.HeaderContentEncoding, "gzip")
	}
	hdr.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	cork.Write(w, req, body)
	return nil
}
