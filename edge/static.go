package edge

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/edge/cork"
	"github.com/trainingco/catalogue/edge/docstore"
)

// Header values every static read shares, capped so that nothing appends into them.
var (
	hdrJSON         = header(echo.MIMEApplicationJSON)
	hdrGzip         = header("gzip")
	hdrVaryEncoding = header(echo.HeaderAcceptEncoding)
	// The class read's body depends on the caller too: a student's JWT gets its own fields
	// (D32), so every answer of it, an API token's included, varies on Authorization (D45).
	hdrVaryCaller = header(echo.HeaderAuthorization + ", " + echo.HeaderAcceptEncoding)
)

// handleCourses serves GET /public/courses, restricted by type (D13); limit and page are
// ignored (the list is never paginated, 4.1).
func (s *Server) handleCourses(c echo.Context) error {
	route := snapshot.RouteCourses
	if c.QueryString() != "" {
		types, ok := parseTypes(queryParams(c))
		if !ok {
			return fail(ErrBadRequest, typesMessage)
		}
		route = snapshot.CoursesRoute(types)
	}
	return s.serveRoute(c, route)
}

// handlePopular serves GET /public/popular.
func (s *Server) handlePopular(c echo.Context) error {
	return s.serveRoute(c, snapshot.RoutePopular)
}

// handleCourse serves GET /public/course/:id; an id that is not a positive base-10 integer
// names nothing (D15).
func (s *Server) handleCourse(c echo.Context) error {
	id, ok := parseID(c.Param("id"))
	if !ok {
		return fail(ErrNotFound, "Course not found.")
	}
	snap, err := s.serving(c)
	if err != nil {
		return err
	}
	doc := snap.Course(id)
	if doc == nil {
		return fail(ErrNotFound, "Course not found.")
	}
	return s.serve(c, snap, doc)
}

// handleClass serves GET /public/class/:id, like handleCourse; for a signed-in student with
// the student's two fields filled in (student.go, D32).
func (s *Server) handleClass(c echo.Context) error {
	id, ok := parseID(c.Param("id"))
	if !ok {
		return fail(ErrNotFound, "Class not found.")
	}
	snap, err := s.serving(c)
	if err != nil {
		return err
	}
	doc := snap.Class(id)
	if doc == nil {
		return fail(ErrNotFound, "Class not found.")
	}
	if who := studentOf(c); who != "" {
		return s.serveStudentClass(c, snap, doc, id, who)
	}
	return s.serveVary(c, snap, doc, hdrVaryCaller)
}

// serveRoute serves a list document, which every snapshot has.
func (s *Server) serveRoute(c echo.Context, route string) error {
	snap, err := s.serving(c)
	if err != nil {
		return err
	}
	doc := snap.Route(route)
	if doc == nil {
		// The builder renders every list and every combination of types, so this is its bug.
		return fmt.Errorf("snapshot %s has no document %s", snap.ID(), route)
	}
	return s.serve(c, snap, doc)
}

// serving returns the snapshot to answer from, read once so that the whole response comes
// from one snapshot, or a 503 before the first one is loaded.
func (s *Server) serving(c echo.Context) (*docstore.Snapshot, error) {
	snap := s.docs.Current()
	if snap == nil {
		c.Response().Header()[hdrRetryAfter] = s.retryAfter
		return nil, fail(ErrUnavailable, "The catalogue is not loaded yet. Try again shortly.")
	}
	return snap, nil
}

// serve writes doc as it is in memory: the gzip body when the client accepts it, 304 when
// the client's If-None-Match holds the tag of the body it would get (D25), headers only for
// HEAD. It writes the stored bytes, so a request neither encodes nor compresses anything.
func (s *Server) serve(c echo.Context, snap *docstore.Snapshot, doc *docstore.Document) error {
	return s.serveVary(c, snap, doc, hdrVaryEncoding)
}

// serveVary is serve with the Vary of the document's route: hdrVaryEncoding, or
// hdrVaryCaller for the class read.
func (s *Server) serveVary(c echo.Context, snap *docstore.Snapshot, doc *docstore.Document, vary []string) error {
	req, res := c.Request(), c.Response()
	h := res.Header()
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	body, etag, length := documentResponse(doc, gz)
	// Add, not set: the CORS middleware may already vary on Origin.
	if v := h["Vary"]; len(v) == 0 {
		h["Vary"] = vary
	} else {
		h["Vary"] = append(v, vary[0])
	}
	h["Etag"] = etag
	h["Cache-Control"] = s.cacheControl
	h["X-Catalogue-Snapshot"] = snap.IDHeader()
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
	cork.Write(res, req, body)
	runtime.KeepAlive(doc) // body is in doc's chunk, which must stay mapped until here
	return nil
}

// documentResponse returns the body of d to send, with gzip or without, and its header
// values: the strong ETag "<sha256>" of the identity body or "<sha256>-gz" of the gzip body
// (D25) and the Content-Length, made together (headerText). Stored per document they would
// cost some 170 bytes each (two quoted 64-digit tags and their slices): 14 MB for the 83,000
// documents of the benchmark's catalogue, against two small allocations per request.
func documentResponse(d *docstore.Document, gz bool) (body []byte, etag, length []string) {
	body = d.Body()
	if gz {
		body = d.GzipBody()
	}
	v := new(headerText)
	t := append(v.buf[:0], '"')
	hash := d.Hash()
	t = hex.AppendEncode(t, hash[:])
	if gz {
		t = append(t, "-gz"...)
	}
	t = append(t, '"')
	n := len(t)
	etag, length = v.values(strconv.AppendInt(t, int64(len(body)), 10), n)
	return body, etag, length
}
