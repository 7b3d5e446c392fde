package search

import (
	"errors"
	"math"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestParseFilterDate(t *testing.T) {
	const badMsg = "The start parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027)."
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"", time.Time{}, false},
		// Only search is trimmed (D11): white space around a date makes it no date (D7, D8).
		{"   ", time.Time{}, true},
		{" 01-31-2027", time.Time{}, true},
		{"01-31-2027 ", time.Time{}, true},
		{"\t1-5-2027\n", time.Time{}, true},
		{"\u00a01-5-2027", time.Time{}, true},
		{"invalid date", time.Time{}, false},
		{"Invalid date", time.Time{}, false},
		{"Invalid Date", time.Time{}, false},
		{"INVALID DATE", time.Time{}, false},
		{" invalid date ", time.Time{}, true},
		{"01-05-2027", date(2027, 1, 5), false},
		{"1-5-2027", date(2027, 1, 5), false},
		{"01-5-2027", date(2027, 1, 5), false},
		{"1-05-2027", date(2027, 1, 5), false},
		{"12-31-2026", date(2026, 12, 31), false},
		{"02-29-2028", date(2028, 2, 29), false}, // leap year
		{"02-29-2027", time.Time{}, true},        // not a leap year
		{"02-30-2027", time.Time{}, true},
		{"04-31-2027", time.Time{}, true},
		{"13-01-2027", time.Time{}, true},
		{"00-10-2027", time.Time{}, true},
		{"10-00-2027", time.Time{}, true},
		{"01-01-0000", time.Time{}, true}, // there is no year 0
		{"01-01-0001", date(1, 1, 1), false},
		{"tomorrow", time.Time{}, true},
		{"invalid", time.Time{}, true},
		{"invalid  date", time.Time{}, true},
		{"2027-01-05", time.Time{}, true}, // ISO is not the filter format
		{"01/05/2027", time.Time{}, true},
		{"01-05-27", time.Time{}, true},
		{"01-05-02027", time.Time{}, true},
		{"001-05-2027", time.Time{}, true},
		{"+1-05-2027", time.Time{}, true},
		{"-1-05-2027", time.Time{}, true},
		{"01-05-2027-", time.Time{}, true},
		{"01--05-2027", time.Time{}, true},
		{"０1-05-2027", time.Time{}, true}, // full-width digit
	}
	for _, tt := range tests {
		got, err := parseFilterDate("start", tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrBadDate) {
				t.Errorf("parseFilterDate(%q) error = %v, want ErrBadDate", tt.in, err)
				continue
			}
			var ce *Error
			if errors.As(err, &ce) && ce.Message != badMsg {
				t.Errorf("parseFilterDate(%q) message mismatch (-want +got):\n%s", tt.in, cmp.Diff(badMsg, ce.Message))
			}
			continue
		}
		if err != nil {
			t.Errorf("parseFilterDate(%q) unexpected error: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseFilterDate(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"", 25, false},
		{"1", 1, false},
		{"25", 25, false},
		{"50", 50, false},
		{"51", 50, false},
		{"1000", 50, false},
		{"0", 25, false},
		{"-1", 25, false},
		{"-0", 25, false},
		{"+7", 7, false},
		{"007", 7, false},
		{" 10 ", 10, false},
		{"9223372036854775807", 50, false},
		{"9223372036854775808", 50, false}, // beyond int64: still an integer
		{"99999999999999999999999999999999999", 50, false}, // far beyond
		{"-99999999999999999999999999999999999", 25, false},
		{"abc", 0, true},
		{"1.5", 0, true},
		{"10.0", 0, true},
		{"1e3", 0, true},
		{"0x10", 0, true},
		{"1 0", 0, true},
		{"+", 0, true},
		{"-", 0, true},
		{"--1", 0, true},
		{"١٠", 0, true}, // Arabic-Indic digits
	}
	for _, tt := range tests {
		got, err := parseLimit(tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrBadRequest) {
				t.Errorf("parseLimit(%q) error = %v, want ErrBadRequest", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseLimit(%q) unexpected error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("parseLimit(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParsePage(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"", 1, false},
		{"1", 1, false},
		{"2", 2, false},
		{"0", 1, false},
		{"-5", 1, false},
		{" 3", 3, false},
		{"9223372036854775807", math.MaxInt64, false},
		{"18446744073709551616", math.MaxInt64, false},
		{"-18446744073709551616", 1, false},
		{"two", 0, true},
		{"2.0", 0, true},
		{"", 1, false},
	}
	for _, tt := range tests {
		got, err := parsePage(tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrBadRequest) {
				t.Errorf("parsePage(%q) error = %v, want ErrBadRequest", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parsePage(%q) unexpected error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("parsePage(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestPageOffset(t *testing.T) {
	tests := []struct{ page, limit, want int64 }{
		{1, 25, 0},
		{2, 25, 25},
		{3, 50, 100},
		{math.MaxInt64 / 50, 50, (math.MaxInt64/50 - 1) * 50},
		{math.MaxInt64/50 + 2, 50, math.MaxInt64},
		{math.MaxInt64, 1, math.MaxInt64 - 1},
		{math.MaxInt64, 2, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := pageOffset(tt.page, tt.limit); got != tt.want {
			t.Errorf("pageOffset(%d, %d) = %d, want %d", tt.page, tt.limit, got, tt.want)
		}
	}
}

func TestEscapeLike(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Welding", "Welding"},
		{"100%", `100\%`},
		{"a_b", `a\_b`},
		{`C:\path`, `C:\\path`},
		{`100% Cotton_Weaving\Basics`, `100\% Cotton\_Weaving\\Basics`},
		{`\%`, `\\\%`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, escapeLike(tt.in)); diff != "" {
			t.Errorf("escapeLike(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseSearchParams(t *testing.T) {
	tests := []struct {
		query   string
		want    Params
		wantErr error
	}{
		{"", Params{Limit: 25}, nil},
		{"search=%20%20weld%20&start=1-5-2027&end=12-31-2027&date=invalid+date&limit=10&page=3&foo=bar",
			Params{Search: "weld", Start: date(2027, 1, 5), End: date(2027, 12, 31), Limit: 10, Offset: 20}, nil},
		{"search=&start=&end=&date=&limit=&page=", Params{Limit: 25}, nil},
		{"date=2-28-2027&limit=0&page=0", Params{Date: date(2027, 2, 28), Limit: 25}, nil},
		{"limit=51&page=2", Params{Limit: 50, Offset: 50}, nil},
		{"limit=50&page=99999999999999999999", Params{Limit: 50, Offset: math.MaxInt64}, nil},
		{"limit=abc&limit=5", Params{Limit: 5}, nil},   // the last value counts, as in PHP (D51)
		{"limit=5&limit=abc", Params{}, ErrBadRequest}, // and only the last
		{"end=tomorrow", Params{}, ErrBadDate},
		{"date=02-30-2027&limit=abc", Params{}, ErrBadDate},
		{"limit=abc", Params{}, ErrBadRequest},
		{"page=abc", Params{}, ErrBadRequest},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseParams(q)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("ParseParams(%q) error = %v, want %v", tt.query, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseParams(%q) unexpected error: %v", tt.query, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseParams(%q) mismatch (-want +got):\n%s", tt.query, diff)
		}
	}
}

func TestLastPage(t *testing.T) {
	tests := []struct{ total, limit, want int64 }{
		{0, 25, 1}, {1, 25, 1}, {25, 25, 1}, {26, 25, 2}, {50, 25, 2}, {51, 25, 3}, {7, 1, 7},
	}
	for _, tt := range tests {
		if got := lastPage(tt.total, tt.limit); got != tt.want {
			t.Errorf("lastPage(%d, %d) = %d, want %d", tt.total, tt.limit, got, tt.want)
		}
	}
}

// The fuzz targets below run their seed corpus in every `go test`; `go test -fuzz` explores.

func FuzzParseFilterDate(f *testing.F) {
	for _, s := range []string{"", "invalid date", "Invalid Date", "1-5-2027", "01-05-2027", "02-30-2027",
		"02-29-2028", "tomorrow", "12-31-9999", "01-01-0000", "1-1-1", "99-99-9999", " 3-4-2027\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseFilterDate("date", s)
		if s != strings.TrimSpace(s) && err == nil {
			t.Fatalf("parseFilterDate(%q) = %v, nil: want ErrBadDate for white space around the value", s, d)
		}
		if err != nil {
			if !errors.Is(err, ErrBadDate) || !strings.Contains(err.Error(), "date") ||
				!strings.Contains(err.Error(), "MM-DD-YYYY") {
				t.Fatalf("parseFilterDate(%q) error %v: want ErrBadDate naming the parameter and format", s, err)
			}
			return
		}
		if d.IsZero() {
			return
		}
		// A parsed date formats back to the same calendar date, with or without zeros.
		for _, layout := range []string{"01-02-2006", "1-2-2006"} {
			again, err := parseFilterDate("date", d.Format(layout))
			if err != nil || !again.Equal(d) {
				t.Fatalf("parseFilterDate(%q) = %v, but its %s form gives %v, %v", s, d, layout, again, err)
			}
		}
		if d.Hour() != 0 || d.Location() != time.UTC {
			t.Fatalf("parseFilterDate(%q) = %v, want midnight UTC", s, d)
		}
	})
}

// bigClamp is the reference for parseQueryInt's saturation, with arbitrary precision.
func bigClamp(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return 0, false
	}
	switch {
	case n.IsInt64():
		return n.Int64(), true
	case n.Sign() > 0:
		return math.MaxInt64, true
	}
	return math.MinInt64, true
}

func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"", "0", "1", "50", "51", "-1", "+3", "abc", "1.5", " 7 ", "9223372036854775808", "-9223372036854775809", "00000000000000000000000042"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseLimit(s)
		if strings.TrimSpace(s) == "" {
			if err != nil || got != 25 {
				t.Fatalf("parseLimit(%q) = %d, %v, want 25", s, got, err)
			}
			return
		}
		n, ok := bigClamp(s)
		if !ok {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("parseLimit(%q) = %d, %v, want ErrBadRequest", s, got, err)
			}
			return
		}
		want := min(n, 50)
		if n < 1 {
			want = 25
		}
		if err != nil || got != want {
			t.Fatalf("parseLimit(%q) = %d, %v, want %d", s, got, err, want)
		}
	})
}

func FuzzParsePage(f *testing.F) {
	for _, s := range []string{"", "0", "1", "2", "-1", "x", "18446744073709551616", " 4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parsePage(s)
		if strings.TrimSpace(s) == "" {
			if err != nil || got != 1 {
				t.Fatalf("parsePage(%q) = %d, %v, want 1", s, got, err)
			}
			return
		}
		n, ok := bigClamp(s)
		if !ok {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("parsePage(%q) = %d, %v, want ErrBadRequest", s, got, err)
			}
			return
		}
		if err != nil || got != max(n, 1) {
			t.Fatalf("parsePage(%q) = %d, %v, want %d", s, got, err, max(n, 1))
		}
		for _, limit := range []int64{1, 25, 50} {
			if off := pageOffset(got, limit); off < 0 {
				t.Fatalf("pageOffset(%d, %d) = %d overflowed", got, limit, off)
			}
		}
	})
}

func FuzzEscapeLike(f *testing.F) {
	for _, s := range []string{"", "%", "_", `\`, `100% Cotton_Weaving\Basics`, `\\%%__`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := escapeLike(s)
		// Reading the pattern the way ILIKE ... ESCAPE '\' does must give back s, with every
		// %, _ and \ of s escaped (literal).
		var out strings.Builder
		for i := 0; i < len(e); i++ {
			switch e[i] {
			case '\\':
				if i+1 == len(e) {
					t.Fatalf("escapeLike(%q) = %q ends in a lone escape", s, e)
				}
				i++
				out.WriteByte(e[i])
			case '%', '_':
				t.Fatalf("escapeLike(%q) = %q has an unescaped wildcard at %d", s, e, i)
			default:
				out.WriteByte(e[i])
			}
		}
		if out.String() != s {
			t.Fatalf("escapeLike(%q) = %q reads back as %q", s, e, out.String())
		}
	})
}
