package edge

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/builder/apitoken"
)

// front is the one middleware every request passes, first. It gives the request an id and
// the security headers (D25), refuses every method but GET and HEAD (D24), recovers from
// panics, writes any error through the error handler, and then counts and times the
// request and writes one log line for it: it runs the error handler itself because the
// status is only known once the error has been written.
//
// Echo routes before it runs, but nothing before the handler depends on the route: a
// refused method gets its 405 whether the path exists or not, and is counted as unmatched.
//
// The line holds the method, the route pattern, the path without its query string, the
// status, the bytes of the body, the duration, the request id and the client's address.
// The query string is left out because search text is what people typed; the
// Authorization header and bodies are never logged, so neither is a token.
func (s *Server) front(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s.serveFront(c, next)
		return nil
	}
}

// serveFront is front's work, in a method so that front's closure holds only next.
func (s *Server) serveFront(c echo.Context, next echo.HandlerFunc) {
	start := time.Now() // wall time, not s.now: tests' fake clocks do not tick
	req, res := c.Request(), c.Response()
	h := res.Header()
	id := s.metrics.ids.from(req.Header)
	h[echo.HeaderXRequestID] = id
	h["X-Content-Type-Options"] = nosniff // set before the handler, so errors carry it too
	pattern := ""
	var err error
	if s.allowedMethod(req.Method) {
		err = s.call(c, next)
		pattern = c.Path()
	} else {
		err = fail(ErrMethod, "Method Not Allowed.")
	}
	if err != nil {
		c.Error(err)
	}
	end := time.Now()
	d := end.Sub(start)
	s.logRequest(req.Context(), end, &requestLine{
		method:   req.Method,
		route:    s.metrics.observe(c.Echo(), pattern, res.Status, d),
		path:     loggedPath(req.URL.Path),
		status:   res.Status,
		bytes:    res.Size,
		duration: d,
		id:       id[0],
		addr:     clientAddr(c),
	})
}

// requestIDs makes request ids: a random prefix chosen when the process starts and a
// counter, unique across the edges and restarts that share a log, without reading
// crypto/rand on every request.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return &requestIDs{prefix: hex.EncodeToString(b) + "-"}
}

// maxRequestIDLen bounds an id taken from the client, which ends up in logs.
const maxRequestIDLen = 64

// from returns the client's X-Request-ID when it is a sane short token (so that a caller
// can follow its request through our logs) and a new id otherwise: anything longer or with
// other characters could forge or flood log lines, and an API token sent there by mistake
// must not reach the log. Any id with the token prefix counts as a token: a token with a
// character added or changed is no valid one, yet logging it would give the real one away.
// The id comes as the header value of the response, which the client's id shares with the
// request (capped, so that nothing appends into it) and a new one makes in a single
// allocation.
func (g *requestIDs) from(h http.Header) []string {
	if v := h[echo.HeaderXRequestID]; len(v) == 1 && saneRequestID(v[0]) && !strings.Contains(v[0], apitoken.Prefix) {
		return v[:1:1]
	}
	v := new(headerText)
	id, _ := v.values(strconv.AppendUint(append(v.buf[:0], g.prefix...), g.n.Add(1), 10), -1)
	return id
}

// headerText holds the text of one or two header values of a response and the one-element
// slices that carry them, in one allocation: a request whose values are made for it (its
// id, its rate-limit counts, a document's ETag and length) pays one allocation for each
// such pair instead of two or three.
type headerText struct {
	first, second [1]string
	buf           [96]byte // room for a quoted SHA-256 tag with -gz and a 20-digit number
}

// values returns t, which must have been appended to buf[:0] and not written since, as the
// first value up to split and the second from there; a negative split makes only the first.
// The slices have no spare capacity, so that a middleware appending a value copies them.
func (v *headerText) values(t []byte, split int) (first, second []string) {
	var s string
	if len(t) > 0 && &t[0] == &v.buf[0] {
		// The values share v's allocation: nothing writes buf again.
		s = unsafe.String(&v.buf[0], len(t))
	} else {
		s = string(t) // longer than buf: never for the values of this package
	}
	if split < 0 {
		v.first[0] = s
		return v.first[:], nil
	}
	v.first[0], v.second[0] = s[:split], s[split:]
	return v.first[:], v.second[:]
}

// loggedPath is the path as it is logged: from the token prefix to the end of its segment
// is replaced, so that a token put in the path by mistake (whole, cut or mistyped) never
// reaches the log. A path without the prefix is returned as it is, without allocating.
func loggedPath(p string) string {
	var b strings.Builder
	for {
		i := strings.Index(p, apitoken.Prefix)
		if i < 0 {
			if b.Len() == 0 {
				return p
			}
			b.WriteString(p)
			return b.String()
		}
		b.WriteString(p[:i])
		b.WriteString(apitoken.Prefix + "[redacted]")
		p = p[i+len(apitoken.Prefix):]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		} else {
			p = ""
		}
	}
}

// saneRequestID accepts 1 to 64 characters of letters, digits, '-', '_', '.' and ':'.
func saneRequestID(s string) bool {
	if len(s) == 0 || len(s) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':':
		default:
			return false
		}
	}
	return true
}
