package search

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// Page sizes of the class search (D9, spec section 8).
const (
	defaultLimit = 25
	maxLimit     = 50
)

// Kinds of *Error: the server maps each to an HTTP status.
var (
	ErrBadRequest = errors.New("bad request")      // limit or page not an integer (D9)
	ErrBadDate    = errors.New("unparseable date") // start, end or date not MM-DD-YYYY (D8: 500 by contract)
)

// Error is a parameter the client got wrong. Its text is the message the client is told;
// Kind is ErrBadRequest or ErrBadDate.
type Error struct {
	Kind    error
	Message string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Kind }

func fail(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Params is a parsed class search request. A zero time means the filter is absent.
type Params struct {
	Search   string    // trimmed course-name substring; "" is no filter
	Start    time.Time // start_date >= Start
	End      time.Time // start_date <= End
	Date     time.Time // start_date <= Date <= end_date
	CourseID int64     // the per-course route's course; 0 is every course
	Limit    int64     // 1..maxLimit
	Offset   int64     // (page-1)*Limit, saturated at math.MaxInt64
}

// ParseParams reads the query of a class search; the course of the per-course route is
// the caller's to set. Unknown parameters are ignored (D16); of a repeated parameter the
// last value counts, as in the contract's PHP original (D51). Errors are *Error, of kind
// ErrBadDate (500 by contract, D8) or ErrBadRequest (D9).
func ParseParams(q url.Values) (Params, error) {
	var p Params
	var err error
	p.Search = strings.TrimSpace(Last(q, "search"))
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"start", &p.Start}, {"end", &p.End}, {"date", &p.Date}} {
		if *f.dst, err = parseFilterDate(f.name, Last(q, f.name)); err != nil {
			return Params{}, err
		}
	}
	if p.Limit, err = parseLimit(Last(q, "limit")); err != nil {
		return Params{}, err
	}
	page, err := parsePage(Last(q, "page"))
	if err != nil {
		return Params{}, err
	}
	p.Offset = pageOffset(page, p.Limit)
	return p, nil
}

// parseFilterDate parses a start, end or date filter (D7, D8). Month and day may omit their
// leading zero; the year has four digits; the date must exist on the calendar. White space
// around it is not trimmed, as only search's is (D11): " 01-31-2027" is no date. An empty
// value and the literal "invalid date" (any case, as JavaScript date libraries print it)
// give the zero time: no filter. Anything else is ErrBadDate, whose message names the
// parameter and the expected format.
func parseFilterDate(name, v string) (time.Time, error) {
	if v == "" || strings.EqualFold(v, "invalid date") {
		return time.Time{}, nil
	}
	d, ok := parseMDY(v)
	if !ok {
		return time.Time{}, fail(ErrBadDate,
			"The %s parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027).", name)
	}
	return d, nil
}

// parseMDY parses M-D-YYYY / MM-DD-YYYY into midnight UTC of that date, checking that the
// date exists (02-30-2027 does not; neither does year 0000).
func parseMDY(v string) (time.Time, bool) {
	parts := strings.Split(v, "-")
	if len(parts) != 3 || len(parts[0]) > 2 || len(parts[1]) > 2 || len(parts[2]) != 4 {
		return time.Time{}, false
	}
	m, okM := digits(parts[0])
	d, okD := digits(parts[1])
	y, okY := digits(parts[2])
	if !okM || !okD || !okY || m < 1 || m > 12 || d < 1 || y < 1 {
		return time.Time{}, false
	}
	t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	// time.Date normalises 02-30 to 03-02; a date that moved does not exist.
	if t.Day() != int(d) || t.Month() != time.Month(m) {
		return time.Time{}, false
	}
	return t, true
}

// digits parses a non-empty string of ASCII digits of at most 18 characters (no overflow).
func digits(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseLimit parses the page size (D9): absent or empty 25, above 50 is 50, below 1 is 25.
// A value that is not a base-10 integer is ErrBadRequest.
func parseLimit(v string) (int64, error) {
	n, present, ok := parseQueryInt(v)
	switch {
	case !ok:
		return 0, fail(ErrBadRequest, "The limit parameter must be an integer.")
	case !present || n < 1:
		return defaultLimit, nil
	case n > maxLimit:
		return maxLimit, nil
	}
	return n, nil
}

// parsePage parses the page number (D9): absent, empty or below 1 is 1. A value that is not
// a base-10 integer is ErrBadRequest.
func parsePage(v string) (int64, error) {
	n, present, ok := parseQueryInt(v)
	switch {
	case !ok:
		return 0, fail(ErrBadRequest, "The page parameter must be an integer.")
	case !present || n < 1:
		return 1, nil
	}
	return n, nil
}

// parseQueryInt parses an integer query value: surrounding white space trimmed, an optional
// sign, then one or more ASCII digits (leading zeros allowed). Integers too large for int64
// are still integers and saturate at math.MaxInt64 / math.MinInt64, so that limit=1e30-style
// huge values clamp like other large ones instead of failing. present is false for an empty
// value; ok is false for anything that is not an integer ("abc", "1.5", "1e3", "0x10").
func parseQueryInt(v string) (n int64, present, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false, true
	}
	neg := false
	if v[0] == '+' || v[0] == '-' {
		neg = v[0] == '-'
		v = v[1:]
	}
	if v == "" {
		return 0, true, false
	}
	var u uint64
	saturated := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, true, false
		}
		if d := uint64(c - '0'); !saturated && u <= (math.MaxInt64-d)/10 {
			u = u*10 + d
		} else {
			saturated = true
		}
	}
	switch {
	case saturated && neg:
		return math.MinInt64, true, true
	case saturated:
		return math.MaxInt64, true, true
	case neg:
		return -int64(u), true, true
	}
	return int64(u), true, true
}

// pageOffset is the number of rows before page (>= 1) of size limit (>= 1), saturated at
// math.MaxInt64 so that a huge page gives an empty page past the last, not an overflow.
func pageOffset(page, limit int64) int64 {
	if page-1 > math.MaxInt64/limit {
		return math.MaxInt64
	}
	return (page - 1) * limit
}

// likeEscaper makes %, _ and \ literal in an ILIKE pattern whose escape character is \ (D11).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// escapeLike returns s with the ILIKE wildcards escaped.
func escapeLike(s string) string { return likeEscaper.Replace(s) }

// ParseQueryInt is parseQueryInt for the edge's other integer parameter, the feeds'
// afterChangeNumber (D37), so that both read integers alike.
func ParseQueryInt(v string) (n int64, present, ok bool) { return parseQueryInt(v) }

// Last is the last value of the query parameter name, "" when it is absent: PHP's parse_str,
// which the contract's original reads its query with, keeps the last of a repeated name.
func Last(q url.Values, name string) string {
	v := q[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}
