package edge

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/edge/cork"
	"github.com/trainingco/catalogue/edge/docstore"
)

// openAPISource is the OpenAPI 3.1 description of the whole API. openapi_test.go sends real
// requests to every endpoint and validates each response against it, so it cannot drift
// from the code.
//
//go:embed openapi.json
var openAPISource []byte

// openAPIServer is the servers entry of openAPISource, written for the default base path;
// a server with another edge.base_path serves the document with its own.
const openAPIServer = `"url": "/api/v2"`

// openAPIDocs holds the document ready to serve for each base path, built on first use:
// in practice one per process, since a server's base path does not change.
var openAPIDocs sync.Map // base path -> *docstore.Document

// openAPIDocument returns the document whose servers entry is base, with its ETags and
// gzip body made once.
func openAPIDocument(base string) (*docstore.Document, error) {
	if d, ok := openAPIDocs.Load(base); ok {
		return d.(*docstore.Document), nil
	}
	url, err := json.Marshal(base)
	if err != nil {
		return nil, fmt.Errorf("encode base path: %w", err)
	}
	if bytes.Count(openAPISource, []byte(openAPIServer)) != 1 {
		return nil, fmt.Errorf("openapi.json: want exactly one %s to rewrite", openAPIServer)
	}
	body := bytes.Replace(openAPISource, []byte(openAPIServer), append([]byte(`"url": `), url...), 1)
	d, err := docstore.NewDocument(body)
	if err != nil {
		return nil, fmt.Errorf("prepare openapi.json: %w", err)
	}
	actual, _ := openAPIDocs.LoadOrStore(base, d)
	return actual.(*docstore.Document), nil
}

// handleOpenAPI serves GET {base_path}/openapi.json without a token, so that client
// generators can fetch it: with an ETag per encoding, 304 for a current copy, gzip when
// accepted, and headers only for HEAD, like the static documents.
func (s *Server) handleOpenAPI(c echo.Context) error {
	doc, err := openAPIDocument(s.cfg.BasePath)
	if err != nil {
		return err
	}
	req, res := c.Request(), c.Response()
	h := res.Header()
	gz := acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	body, etag, length := documentResponse(doc, gz)
	if gz {
		h[echo.HeaderContentEncoding] = hdrGzip
	}
	h.Add("Vary", echo.HeaderAcceptEncoding)
	h["Etag"] = etag
	h["Cache-Control"] = openAPICacheControl
	if inm := req.Header["If-None-Match"]; len(inm) > 0 && noneMatch(inm, etag[0]) {
		h.Del(echo.HeaderContentEncoding)
		res.WriteHeader(http.StatusNotModified)
		return nil
	}
	h["Content-Type"] = hdrJSON
	h["Content-Length"] = length
	res.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return nil
	}
	cork.Write(res, req, body)
	return nil
}

// openAPICacheControl lets clients keep the document but ask again each time; the ETag
// makes asking cheap, and a new release is seen at once.
var openAPICacheControl = header("no-cache")

// handleDocs serves the documentation page (edge/apidocs) at {base_path}/docs and its files
// under {base_path}/docs/, without a token. Any other name there is an unknown path like
// any outside /public: 404, counted against the client's address (handleStray).
func (s *Server) handleDocs(c echo.Context) error {
	req := c.Request()
	if !s.apiDocs.Serve(c.Response(), req, c.Param("*"), acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))) {
		return s.handleStray(c)
	}
	return nil
}
