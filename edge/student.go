package edge

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/edge/cork"
	"github.com/trainingco/catalogue/edge/docstore"
	"github.com/trainingco/catalogue/edge/gzipbody"
	"github.com/trainingco/catalogue/edge/student"
)

// studentKey is the echo.Context key under which requireToken keeps the student a JWT
// names (D31); absent for an API token.
const studentKey = "catalogue.student"

// studentOf returns the student of the request, or "" for an API token.
func studentOf(c echo.Context) string {
	s, _ := c.Get(studentKey).(string)
	return s
}

// hdrPrivateNoStore is the Cache-Control of a student's class read: the response is one
// student's at one moment, so no cache may keep it (D32); Vary: Authorization tells any
// that does not know no-store that another Authorization gets another answer.
var hdrPrivateNoStore = header("private, no-store")

// serveStudentClass answers GET /public/class/:id for a signed-in student: the snapshot's
// document doc of class id with registration_id and prev_reg_test_date read from the
// replica (D32). It carries no ETag, the anonymous document's or any other: the body
// changes with the database, not with the snapshot. A replica that cannot answer makes this
// read 503; every other read is still served from memory.
func (s *Server) serveStudentClass(c echo.Context, snap *docstore.Snapshot, doc *docstore.Document, id int64, who string) error {
	d, err := student.Parse(doc.Body())
	runtime.KeepAlive(doc) // Parse copies what it keeps out of doc's chunk
	if err != nil {
		return fmt.Errorf("class %d of snapshot %s: %w", id, snap.ID(), err)
	}
	f, err := s.student.Read(c.Request().Context(), who, id, d.CourseID())
	if err != nil {
		return failCause(ErrUnavailable, err, "The student's registration details are temporarily unavailable. Please try again shortly.")
	}
	req, res := c.Request(), c.Response()
	h := res.Header()
	body := d.AppendWith(make([]byte, 0, len(doc.Body())+32), f)
	h.Add("Vary", hdrVaryCaller[0])
	h["Cache-Control"] = hdrPrivateNoStore
	h["X-Catalogue-Snapshot"] = snap.IDHeader()
	h["Content-Type"] = hdrJSON
	if acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding)) {
		body = gzipbody.Append(make([]byte, 0, len(body)/2+64), body)
		h["Content-Encoding"] = hdrGzip
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	res.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	cork.Write(res, req, body)
	return nil
}
