package edge

import (
	"fmt"
	"net/http"
	"runtime"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Header values every static read shares; see document for why they are capped slices.
var (
	hdrJSON         = header(echo.MIMEApplicationJSON)
	hdrGzip         = header("gzip")
	hdrVaryEncoding = header(echo.HeaderAcceptEncoding)
)

// handleCourses serves GET /public/courses, restricted by type (D13); limit and page are
// ignored (the list is never paginated, 4.1).
func (d *staticDocs) handleCourses(c echo.Context) error {
	route := snapshot.RouteCourses
	if c.QueryString() != "" {
		types, ok := parseTypes(c.QueryParams())
		if !ok {
			return fail(ErrBadRequest, typesMessage)
		}
		route = snapshot.CoursesRoute(types)
	}
	return d.serveRoute(c, route)
}

// handlePopular serves GET /public/popular.
func (d *staticDocs) handlePopular(c echo.Context) error {
	return d.serveRoute(c, snapshot.RoutePopular)
}

// handleCourse serves GET /public/course/:id; an id that is not a positive base-10 integer
// names nothing (D15).
func (d *staticDocs) handleCourse(c echo.Context) error {
	id, ok := parseID(c.Param("id"))
	if !ok {
		return fail(ErrNotFound, "Course not found.")
	}
	snap, err := d.serving(c)
	if err != nil {
		return err
	}
	doc := snap.course(id)
	if doc == nil {
		return fail(ErrNotFound, "Course not found.")
	}
	return d.serve(c, snap, doc)
}

// handleClass serves GET /public/class/:id, like handleCourse.
func (d *staticDocs) handleClass(c echo.Context) error {
	id, ok := parseID(c.Param("id"))
	if !ok {
		return fail(ErrNotFound, "Class not found.")
	}
	snap, err := d.serving(c)
	if err != nil {
		return err
	}
	doc := snap.class(id)
	if doc == nil {
		return fail(ErrNotFound, "Class not found.")
	}
	return d.serve(c, snap, doc)
}

// serveRoute serves a list document, which every snapshot has.
func (d *staticDocs) serveRoute(c echo.Context, route string) error {
	snap, err := d.serving(c)
	if err != nil {
		return err
	}
	doc := snap.route(route)
	if doc == nil {
		// The builder renders every list and every combination of types, so this is its bug.
		return fmt.Errorf("snapshot %s has no document %s", snap.id, route)
	}
	return d.serve(c, snap, doc)
}

// serving returns the snapshot to answer from, read once so that the whole response comes
// from one snapshot, or a 503 before the first one is loaded.
func (d *staticDocs) serving(c echo.Context) (*memSnapshot, error) {
	snap := d.cur.Load()
	if snap == nil {
		c.Response().Header().Set("Retry-After", d.retryAfter)
		return nil, fail(ErrUnavailable, "The catalogue is not loaded yet. Try again shortly.")
	}
	return snap, nil
}

// serve writes doc as it is in memory: the gzip body when the client accepts it, 304 when
// the client's If-None-Match holds the tag of the body it would get (D25), headers only for
// HEAD. It writes the stored bytes, so a request neither encodes nor compresses anything.
func (d *staticDocs) serve(c echo.Context, snap *memSnapshot, doc *document) error {
	req, res := c.Request(), c.Response()
	h := res.Header()
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	body, etag, length := doc.response(gz)
	// Add, not set: the CORS middleware may already vary on Origin.
	if v := h["Vary"]; len(v) == 0 {
		h["Vary"] = hdrVaryEncoding
	} else {
		h["Vary"] = append(v, hdrVaryEncoding[0])
	}
	h["Etag"] = etag
	h["Cache-Control"] = d.cacheControl
	h["X-Catalogue-Snapshot"] = snap.idHeader
	if inm := req.Header["If-None-Match"]; len(inm) > 0 && noneMatch(inm, etag[0]) {
		res.WriteHeader(http.StatusNotModified)
		return nil
	}
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = length
	if gz {
		h["Content-Encoding"] = hdrGzip
	}
	res.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	// A failed write means the client has gone; the status is sent and there is nobody left
	// to tell, so the error is dropped.
	_, _ = res.Write(body)
	runtime.KeepAlive(doc) // body is in doc's chunk, which must stay mapped until here
	return nil
}
