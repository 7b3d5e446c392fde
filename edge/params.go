package edge

import (
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// maxID is the largest path id: ids are PostgreSQL bigints, so a longer number names nothing.
const maxID = 1<<63 - 1

// parseID parses a path id (D15): a positive base-10 integer written with the digits 0-9
// only. Signs, spaces, fractions, exponents, leading zeros ("01") and numbers past the
// int64 range are refused, so that every course and class has exactly one URL; a refused id
// is answered 404 like an id that names nothing. It does not allocate.
func parseID(s string) (int64, bool) {
	if s == "" || s[0] == '0' || len(s) > 19 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + uint64(d) // 19 digits fit in a uint64, so this cannot wrap
	}
	if n > maxID {
		return 0, false
	}
	return int64(n), true
}

// parseSearchCourseID parses the per-course search's path id (D15): like parseID, but a
// positive base-10 integer past the int64 range is well formed too, and names no course
// (none is false): its search is the empty result, as for any unknown course, never 404.
func parseSearchCourseID(s string) (id int64, none, ok bool) {
	if n, valid := parseID(s); valid {
		return n, false, true
	}
	if s == "" || s[0] == '0' {
		return 0, false, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false, false
		}
	}
	return 0, true, true // digits without a leading zero that parseID refused: past int64
}

// queryParams reads the request's query string as the contract's PHP original reads it
// (parse_str): pairs split on "&" only, "+" is a space, and a "%" not followed by two hex
// digits stays as it is. Go's url.ParseQuery, behind Echo's QueryParams, drops a pair it
// cannot decode (a stray "%", a ";") as if it were absent, which read "afterChangeNumber=12%"
// as no position, "type=Online%" as no filter and "start=01-31-2027;" as no date. Read
// this way every such value reaches its parameter's own rule (D51): a 400 for a number
// (D9, D37) or a type (D13), D8's 500 for a date, a literal "%" in search (D11), and an
// unknown parameter is ignored however it is written (D16).
func queryParams(c echo.Context) url.Values {
	raw := c.Request().URL.RawQuery
	if raw == "" {
		return nil // reads as empty; the feeds' first page needs no map
	}
	q := url.Values{}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		name, value, _ := strings.Cut(pair, "=")
		name = unescapeLenient(name)
		q[name] = append(q[name], unescapeLenient(value))
	}
	return q
}

// unescapeLenient decodes "+" and "%XX" escapes, keeping a "%" without two hex digits.
func unescapeLenient(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// typesMessage is the 400 message for a course type outside the three allowed (D13).
const typesMessage = "The selected type is invalid. Allowed types: Online, Brick and Mortar, Blended."

// parseTypes returns the course types that the course list is restricted to (D13). The
// key may be written type=X, type[]=X or, as PHP-style clients such as the qs library
// write by default, type[0]=X; several may be given, in any order and with duplicates;
// empty values are ignored. ok is false when a value is not one of the three types exactly.
// It returns nil, true when the list is not restricted.
func parseTypes(q url.Values) (types []string, ok bool) {
	for key, vals := range q {
		if !isTypeKey(key) {
			continue
		}
		for _, v := range vals {
			if v == "" {
				continue
			}
			if !isCourseType(v) {
				return nil, false
			}
			types = append(types, v)
		}
	}
	return types, true
}

// isTypeKey reports whether a query key is type, type[] or type[N].
func isTypeKey(key string) bool {
	if key == "type" || key == "type[]" {
		return true
	}
	idx, ok := strings.CutPrefix(key, "type[")
	if !ok {
		return false
	}
	idx, ok = strings.CutSuffix(idx, "]")
	if !ok || idx == "" {
		return false
	}
	for i := 0; i < len(idx); i++ {
		if idx[i] < '0' || idx[i] > '9' {
			return false
		}
	}
	return true
}

// isCourseType reports whether v is one of the three course types, compared exactly.
func isCourseType(v string) bool {
	for _, t := range snapshot.CourseTypes {
		if v == t {
			return true
		}
	}
	return false
}
