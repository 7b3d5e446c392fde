package security

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
)

// hostile generates random and hostile requests from a seeded source, so that a failure is
// reproduced by the same seed and request number.
type hostile struct {
	r        *rand.Rand
	token    string   // the site's valid token
	unknown  string   // a well-formed token that was never issued
	courses  []string // ids of public and non-public courses
	classes  []string
	etags    []string // ETags seen in earlier answers, sent back in If-None-Match
	searched int      // requests to a search route
}

// wireRequest is a request as it goes on the wire: the request line's method and target,
// header fields in order, a body and the client's address.
type wireRequest struct {
	method, target string
	header         [][2]string
	body           string
	remote         string
}

// String describes the request for a failure message, long values cut.
func (w wireRequest) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s from %s", w.method, cut(w.target), w.remote)
	for _, h := range w.header {
		fmt.Fprintf(&b, "\n  %s: %s", h[0], cut(h[1]))
	}
	if w.body != "" {
		fmt.Fprintf(&b, "\n  body of %d bytes", len(w.body))
	}
	return b.String()
}

func cut(s string) string {
	if len(s) > 160 {
		return fmt.Sprintf("%q… (%d bytes)", s[:160], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func (h *hostile) pick(options ...string) string { return options[h.r.IntN(len(options))] }

func (h *hostile) chance(percent int) bool { return h.r.IntN(100) < percent }

// request returns the next request.
func (h *hostile) request() wireRequest {
	w := wireRequest{method: h.method(), remote: h.remote()}
	path, search := h.path()
	if search {
		h.searched++
	}
	w.target = path
	if q := h.query(); q != "" || h.chance(5) {
		w.target += "?" + q
	}
	w.header = h.headers()
	if w.method != "GET" && w.method != "HEAD" && h.chance(50) {
		w.body = h.value()
	}
	return w
}

// method is GET mostly, then HEAD, then anything else, odd spellings included.
func (h *hostile) method() string {
	switch n := h.r.IntN(100); {
	case n < 72:
		return "GET"
	case n < 84:
		return "HEAD"
	}
	return h.pick("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "get", "Get",
		"FOO", "M-SEARCH", "CONNECT")
}

func (h *hostile) remote() string {
	return h.pick("192.0.2.1:1234", "198.51.100.7:40000", "[2001:db8::1]:443", "[::1]:8080", "127.0.0.1:1")
}

// path is one of the API's paths with hostile ids, sometimes bent (.., //, encoded slashes,
// case, another version), or junk; search reports whether it names a search route as is.
func (h *hostile) path() (p string, search bool) {
	routes := []string{"/public/courses", "/public/popular", "/public/classes", "/public/course/{c}",
		"/public/class/{k}", "/public/course/{c}/classes"}
	switch n := h.r.IntN(100); {
	case n < 80:
		route := routes[h.r.IntN(len(routes))]
		search = strings.HasSuffix(route, "classes")
		route = strings.ReplaceAll(route, "{c}", h.id(h.courses))
		route = strings.ReplaceAll(route, "{k}", h.id(h.classes))
		if strings.Contains(route, "%2F") || strings.Contains(route, "/.") || strings.Count(route, "/") > 4 {
			search = false
		}
		return base + route, search
	case n < 90:
		return h.bentPath(routes[h.r.IntN(len(routes))]), false
	case n < 95:
		return h.pick("/healthz", "/readyz", "/metrics", base+"/openapi.json", base, base+"/", "/", base+"/public",
			base+"/public/"), false
	}
	return "/" + strings.ReplaceAll(url.PathEscape(h.value()), "%2F", "/"), false
}

// bentPath writes route in a way a server should not take for the route itself, or should
// take the same (a dot segment a client cleaned up).
func (h *hostile) bentPath(route string) string {
	route = strings.ReplaceAll(route, "{c}", "1")
	route = strings.ReplaceAll(route, "{k}", "1")
	switch h.r.IntN(9) {
	case 0:
		return base + "/" + route
	case 1:
		return base + "/public/../public" + strings.TrimPrefix(route, "/public")
	case 2:
		return base + "/./" + strings.TrimPrefix(route, "/")
	case 3:
		return strings.ToUpper(base + route)
	case 4:
		return "/api/v1" + route
	case 5:
		return base + route + "/"
	case 6:
		return base + strings.ReplaceAll(route, "/", "%2F")
	case 7:
		return "//" + strings.TrimPrefix(base+route, "/")
	}
	return base + route + "/../../../../etc/passwd"
}

// id is a real id of the list, public or not, or a hostile one, escaped for a path.
func (h *hostile) id(real []string) string {
	if h.chance(50) && len(real) > 0 {
		return real[h.r.IntN(len(real))]
	}
	v := h.pick("0", "-1", "01", "+1", "1.5", "1e3", "0x10", "9223372036854775807", "9223372036854775808",
		"99999999999999999999999999", strings.Repeat("9", 1000), "abc", "1;2", "1 ", "１", "..", ".",
		"%00", "%ff", "%2e%2e", "%31", "1%2F2", "' OR 1=1 --", "1) UNION SELECT token_hash FROM api_tokens --")
	if strings.Contains(v, "%") {
		return v // already escaped, on purpose
	}
	return url.PathEscape(v)
}

// queryKeys are the keys a query is made of: the API's parameters in their usual and
// unusual spellings, and unknown ones.
var queryKeys = []string{"search", "start", "end", "date", "limit", "page", "type", "type[]", "type[0]",
	"type[x]", "type[", "Search", "LIMIT", "token", "api_token", "access_token", "", "%00", "a\xffb"}

// query is zero to seven key=value pairs, repeated keys included, each encoded one of
// several ways: escaped, raw, double-escaped, with bad escapes or with a semicolon.
func (h *hostile) query() string {
	var pairs []string
	for range h.r.IntN(8) {
		k, v := h.pick(queryKeys...), h.value()
		switch h.r.IntN(10) {
		case 0, 1, 2, 3, 4, 5:
			pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(v))
		case 6:
			pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(url.QueryEscape(v)))
		case 7:
			pairs = append(pairs, url.QueryEscape(k)+"="+rawQueryValue(v))
		case 8:
			pairs = append(pairs, url.QueryEscape(k)+"="+h.pick("%", "%zz", "%2", "%%", "%u0041", "%C0%AF",
				"%E2%80%AE", "%ED%A0%80", "%00", "%0d%0a")+url.QueryEscape(v))
		default:
			pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(v)+";x=1")
		}
	}
	return strings.Join(pairs, h.pick("&", "&", "&", "&&", "&=&"))
}

// rawQueryValue is v with only what would end the request line or the query escaped:
// invalid UTF-8 and other bytes go on the wire as they are.
func rawQueryValue(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c == '#' || c == '&' || c == '%' || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// value is a hostile parameter value: dates right and wrong, numbers huge and negative,
// types, SQL, LIKE wildcards, escapes, control characters, NUL, invalid UTF-8, markup and
// long strings of up to 64 KB.
func (h *hostile) value() string {
	if h.chance(8) {
		return h.long()
	}
	return h.pick("", " ", "invalid date", "INVALID DATE", "Invalid date ", "02-30-2027", "13-45-2027",
		"1-5-2027", "03-01-2027", "12-31-9999", "01-01-0000", "2027-01-01", "1/5/2027", "tomorrow", "-1", "0",
		"1", "2", "50", "51", "99999999999999999999999999", "-99999999999999999999", "9223372036854775807",
		"1e9", "0x10", "NaN", "Infinity", "1.5", "+3", " 7 ", "Online", "Blended", "Brick and Mortar",
		"online", "Webinar", "Welding", "Go", "' OR 1=1 --", "'; DROP TABLE courses; --",
		"1) UNION SELECT token_hash FROM api_tokens --", `" OR ""="`, "%", "_", `\`, "%%", `\%`, "%25",
		"%2525", "%_\\", "\x00", "a\x00b", "\xff\xfe", "\xc3", "Caf\xe9", "é", "😀", "\u202e", "\u2028",
		"<script>alert(1)</script>", "${jndi:ldap://x/a}", "../../etc/passwd", "{{7*7}}", "\x01\x1f\x7f",
		"\r\n", "\t", "a[]=b", "[]", "type[]", strings.Repeat("%", 300), marker)
}

// long is a string of 1 to 64 KB: one repeated character or random bytes.
func (h *hostile) long() string {
	n := 1 << (10 + h.r.IntN(7)) // 1 KB … 64 KB
	if h.chance(50) {
		return strings.Repeat(h.pick("a", "%", "_", "\\", "'", "9", "\x00", "é", "\xff"), n)[:n]
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(h.r.IntN(256))
	}
	return string(b)
}

// headers are an Authorization header (the valid token most of the time) and a few others
// with odd values. Values never hold CR or LF, which would end the field on the wire.
func (h *hostile) headers() [][2]string {
	var hs [][2]string
	add := func(k, v string) { hs = append(hs, [2]string{k, strings.NewReplacer("\r", "", "\n", "").Replace(v)}) }
	switch n := h.r.IntN(100); {
	case n < 85:
		add("Authorization", h.pick("Bearer ", "bearer ", "BEARER ", "Bearer   ")+h.token)
	case n < 88:
	case n < 90:
		add("Authorization", "Bearer "+h.token)
		add("Authorization", "Bearer "+h.token)
	default:
		add("Authorization", h.pick("", "Bearer", "Bearer ", "Basic "+h.token, "Bearer "+h.unknown,
			"Bearer "+h.token+"x", "Bearer "+strings.ToUpper(h.token), "Bearer "+h.token[:20], "Token "+h.token,
			"Bearer "+h.value(), h.value()))
	}
	for range h.r.IntN(4) {
		switch h.r.IntN(9) {
		case 0:
			add("Accept-Encoding", h.pick("gzip", "GZIP", "gzip;q=0", "br", "*", "*;q=0", "gzip, deflate, br",
				"gzip;q=1.5", "identity;q=0", "x-gzip", ";;;", h.value()))
		case 1:
			add("If-None-Match", h.pick("*", `"x"`, `W/"x"`, h.etag(), h.etag()+", *", h.value()))
		case 2:
			add("X-Request-ID", h.pick("abc-1", h.token, h.value()))
		case 3:
			add("Origin", h.pick("https://evil.example", "null", h.value()))
		case 4:
			add("X-Forwarded-For", h.pick("203.0.113.9", "::1, 10.0.0.1", h.value()))
		case 5:
			add("Range", h.pick("bytes=0-10", "bytes=-1", "bytes=999999-", h.value()))
		case 6:
			add("Content-Type", h.pick("application/json", "text/plain; charset=\xff", h.value()))
		case 7:
			add("Cookie", "session="+h.value())
		default:
			add(h.pick("X-Api-Key", "Api-Key", "X-Custom", "Accept", "Accept-Language", "User-Agent", "Referer"),
				h.value())
		}
	}
	return hs
}

// etag is one seen in an earlier answer, or a made-up one.
func (h *hostile) etag() string {
	if len(h.etags) == 0 {
		return `"` + strconv.Itoa(h.r.IntN(1000)) + `"`
	}
	return h.etags[h.r.IntN(len(h.etags))]
}
