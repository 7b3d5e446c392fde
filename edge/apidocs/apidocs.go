// Package apidocs is the API's documentation page, {base_path}/docs: Swagger UI rendering
// the OpenAPI document that the edge serves beside it. Swagger UI comes from the npm package
// swagger-ui-dist, pinned in scripts/openapi/package.json and committed in assets/ with its
// licence (scripts/openapi.sh refresh-docs copies it; make test checks that the committed
// files are the pinned package's). Everything the page loads is in the binary: no CDN, it
// works offline, and its Content-Security-Policy allows nothing else.
package apidocs

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"hash"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// CSP is the page's Content-Security-Policy: scripts, styles, fonts and fetches from this
// server only (the bundle, the stylesheet, init.js and the OpenAPI document), images from it
// or inline data: URIs (Swagger UI's stylesheet draws its icons with them), and nothing may
// frame the page, change its base or submit a form. No inline script or style is needed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed assets page.html init.js
var files embed.FS

// The page is page.html with its two placeholders replaced, absolute paths on this server
// so that the page works at {base_path}/docs and {base_path}/docs/ alike. It is not an
// html/template: a reachable template Execute makes the linker keep every exported method
// of every type the program may put in an interface (a template may call any of them by
// name). That took the edge's .text from 9.4 to 18.1 MB (113 S3 operations, 621 go-redis
// commands) and its .gopclntab from 7.8 to 13.2 MB, and the pages of them the start
// touches raised its RSS at ready by 5.1 MB (cmd/edge's TestLinkerDropsUnusedMethods).
const (
	placeholderPrefix   = "{{.Prefix}}"   // the path of the docs' files
	placeholderDocument = "{{.Document}}" // the OpenAPI document's path
)

// Docs serves the page and its assets, with a gzip body and a strong ETag for each. New
// renders the page only; a file's ETags and gzip body are made on its first request, and
// its identity body is read from the binary at each: most edges never serve the page, and
// preparing every file at start (New allocated 9.6 MB, copying Swagger UI's 1.9 MB out of
// the binary and gzipping it) kept 2.6 MB in the heap and raised the edge's RSS at ready
// from 89.7-89.9 to 94.8-97.5 MB (the bench dataset, 4 runs each).
type Docs struct {
	files map[string]*file // "" is the page; other names are the files under the prefix
}

// file is one file of the docs.
type file struct {
	contentType string
	// content is the identity body: the rendered page, or the embedded file read where it
	// is in the binary (embed's files read at an offset without a state of their own, so
	// one serves every request at once).
	content io.ReaderAt
	size    int64

	once        sync.Once // makes gz, etag and etagZ, on the first request
	gz          []byte
	etag, etagZ string
}

// New prepares the page of an edge whose base path is base ("/api/v2"): the page is
// served at base+"/docs" and loads its assets from base+"/docs/NAME" and the OpenAPI
// document from base+"/openapi.json".
func New(base string) (*Docs, error) {
	base = strings.TrimSuffix(base, "/")
	page, err := render(base+"/docs", base+"/openapi.json")
	if err != nil {
		return nil, err
	}
	d := &Docs{files: map[string]*file{"": {contentType: "text/html; charset=utf-8", content: bytes.NewReader(page), size: int64(len(page))}}}
	names := []string{"init.js"}
	entries, err := fs.ReadDir(files, "assets")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		names = append(names, path.Join("assets", e.Name()))
	}
	for _, name := range names {
		if d.files[path.Base(name)], err = embedded(name); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// embedded returns the file of files at name, without reading it.
func embedded(name string) (*file, error) {
	f, err := files.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return nil, fmt.Errorf("embedded %s: not an io.ReaderAt", name)
	}
	return &file{contentType: contentType(name), content: ra, size: info.Size()}, nil
}

// render returns page.html for the docs at prefix and the OpenAPI document at document,
// both escaped as html/template did: percent-encoded where a URL path may not hold the
// character as it is, then for HTML.
func render(prefix, document string) ([]byte, error) {
	src, err := files.ReadFile("page.html")
	if err != nil {
		return nil, err
	}
	inURL := func(p string) string { return html.EscapeString((&url.URL{Path: p}).EscapedPath()) }
	r := strings.NewReplacer(placeholderPrefix, inURL(prefix), placeholderDocument, inURL(document))
	return []byte(r.Replace(string(src))), nil
}

// prepare makes f's ETags and gzip body from one read of its body.
func (f *file) prepare() {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // a valid level: no error
	sum := sha256.New()
	// Memory to memory: neither the reads nor the writes can fail.
	_, _ = io.Copy(io.MultiWriter(sum, zw), io.NewSectionReader(f.content, 0, f.size))
	_ = zw.Close()
	f.gz = gz.Bytes()
	f.etag, f.etagZ = etag(sum, ""), etag(sum, "-gzip")
}

// etag is a strong entity tag from the content's hash; the gzip encoding has its own.
func etag(sum hash.Hash, suffix string) string {
	return `"` + base64.RawURLEncoding.EncodeToString(sum.Sum(nil)[:18]) + suffix + `"`
}

// contentType is the media type of an asset, from its name.
func contentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".js"):
		return "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		return "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".png"):
		return "image/png"
	default: // LICENSE, NOTICE, *.LICENSE.txt
		return "text/plain; charset=utf-8"
	}
}

// Serve answers a GET or HEAD for name, "" for the page or the name of one of its files,
// and reports whether there is such a file; when there is none it writes nothing, so that
// the caller answers 404 in its own way. It sends the gzip body when gz is true (the
// caller has negotiated it), and 304 when If-None-Match names the current ETag.
func (d *Docs) Serve(w http.ResponseWriter, r *http.Request, name string, gz bool) bool {
	f, ok := d.files[name]
	if !ok {
		return false
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Content-Security-Policy", CSP)
	h.Set("Cache-Control", "no-cache") // always revalidate: the ETag makes that cheap
	h.Add("Vary", "Accept-Encoding")
	f.once.Do(f.prepare)
	var body io.ReadSeeker = io.NewSectionReader(f.content, 0, f.size)
	tag := f.etag
	if gz {
		body, tag = bytes.NewReader(f.gz), f.etagZ
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", tag)
	// ServeContent answers If-None-Match and HEAD (and sets Content-Length on an identity
	// body; not with Content-Encoding set, which it leaves to the writer). It is shown no
	// other header: it would answer a thousand 1-byte ranges with a megabyte of multipart,
	// for anyone, and a failed range or If-Match with its own 416 or 412 in plain text
	// (D24). The page is small enough to send whole.
	only := *r
	only.Header = http.Header{"If-None-Match": r.Header.Values("If-None-Match")}
	http.ServeContent(noRanges{w}, &only, name, time.Time{}, body)
	return true
}

// noRanges drops the Accept-Ranges: bytes that ServeContent sets, ranges being ignored.
type noRanges struct{ http.ResponseWriter }

func (w noRanges) WriteHeader(code int) {
	w.Header().Del("Accept-Ranges")
	w.ResponseWriter.WriteHeader(code)
}
