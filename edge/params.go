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

// queryParams parses the request's query string. Echo's QueryParams drops a pair it cannot
// decode (a "%" not followed by two hex digits, a ";" between pairs) as if it were absent,
// which would read "afterChangeNumber=12%" as no position and "type=Online%" as no filter:
// such a query is a 400 instead (D51), even when the broken pair is one D16 ignores.
func queryParams(c echo.Context) (url.Values, error) {
	raw := c.Request().URL.RawQuery
	if raw == "" {
		return nil, nil // reads as empty; the feeds' first page needs no map
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, fail(ErrBadRequest, "The query string is malformed (%s): encode each name and value, for example with encodeURIComponent.", err)
	}
	return q, nil
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
