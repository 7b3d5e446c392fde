package telemetry

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/builder/apitoken"
)

// RequestIDs makes request ids: a random prefix chosen when the process starts and a
// counter, unique across the edges and restarts that share a log, without reading
// crypto/rand on every request.
type RequestIDs struct {
	prefix string
	n      atomic.Uint64
}

// NewRequestIDs returns a maker of ids with a prefix of its own.
func NewRequestIDs() *RequestIDs {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return &RequestIDs{prefix: hex.EncodeToString(b) + "-"}
}

// maxRequestIDLen bounds an id taken from the client, which ends up in logs.
const maxRequestIDLen = 64

// FromClient returns the client's X-Request-ID when it is a sane short token, so that a
// caller can follow its request through our logs, as the header value of the response
// (capped, so that nothing appends into the request's). Anything longer or with other
// characters could forge or flood log lines, and an API token sent there by mistake must
// not reach the log: any id with the token prefix counts as a token, since a token with a
// character added or changed is no valid one, yet logging it would give the real one away.
// So does any id holding JWTMark: a JWT is too long for an id, but a part of one is not.
func (g *RequestIDs) FromClient(h http.Header) ([]string, bool) {
	if v := h[echo.HeaderXRequestID]; len(v) == 1 && saneRequestID(v[0]) &&
		!strings.Contains(v[0], apitoken.Prefix) && !strings.Contains(v[0], JWTMark) {
		return v[:1:1], true
	}
	return nil, false
}

// AppendNew appends a new id to b.
func (g *RequestIDs) AppendNew(b []byte) []byte {
	return strconv.AppendUint(append(b, g.prefix...), g.n.Add(1), 10)
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
