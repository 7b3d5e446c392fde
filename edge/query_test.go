package edge

import (
	"net/http"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestQueryReadAsPHPReadsIt: a query string is read as the contract's PHP original reads it
// (D51): split on "&" only, a "%" without two hex digits kept, so that a broken value meets
// its parameter's own rule and is never taken as absent. "afterChangeNumber=12%" read as no
// position would walk the feed from its start, "type=Online%" would list every course and
// "start=…;" would search without the filter.
func TestQueryReadAsPHPReadsIt(t *testing.T) {
	f := fixture{id: "query", docs: map[string]string{"/public/class/3": `{"course_id":1}`}, modified: map[string]int64{"/public/class/3": 42}}
	ts := startOn(t, openStore(t, testkit.NewLocalStore(t)), f)
	const (
		after = `{"message":"The afterChangeNumber parameter must be an integer."}` + "\n"                                   // D37, as D9
		types = `{"message":"The selected type is invalid. Allowed types: Online, Brick and Mortar, Blended."}` + "\n"       // D13
		start = `{"message":"The start parameter must be a date in the format MM-DD-YYYY (for example 01-31-2027)."}` + "\n" // D8
		page  = `{"message":"The page parameter must be an integer."}` + "\n"                                                // D9
	)
	for _, tc := range []struct {
		target string
		status int
		body   string
	}{
		{"/api/v2/public/feeds/classes?afterChangeNumber=12%", 400, after},
		{"/api/v2/public/feeds/classes?afterChangeNumber=1%ZZ", 400, after},
		{"/api/v2/public/feeds/courses?afterChangeNumber=5;x=1", 400, after},
		{"/api/v2/public/courses?type=Online%", 400, types},
		{"/api/v2/public/courses?type=Online;", 400, types},
		{"/api/v2/public/classes?start=01-31-2027;", 500, start},
		{"/api/v2/public/classes?start=%", 500, start},
		{"/api/v2/public/course/1/classes?page=2%", 400, page},
	} {
		got := ts.get(http.MethodGet, tc.target, nil, "Content-Type", "Cache-Control")
		if got.Status != tc.status || got.Body != tc.body || got.Headers["Cache-Control"] != "no-store" {
			t.Errorf("GET %s = %d %q %v, want %d %q, no-store", tc.target, got.Status, got.Body, got.Headers, tc.status, tc.body)
		}
	}
	// Well-formed queries are read as before; an unknown parameter is ignored however it is
	// written (D16), and a "%" in search is a literal character (D11).
	for _, target := range []string{
		"/api/v2/public/feeds/classes?afterChangeNumber=12%34", // %34 is "4": position 124
		"/api/v2/public/feeds/classes?afterChangeNumber=5&utm=%",
		"/api/v2/public/feeds/classes?utm=a;b&afterChangeNumber=5",
		"/api/v2/public/feeds/classes?afterChangeNumber=abc&afterChangeNumber=5", // the last value counts
		"/api/v2/public/courses?type=Brick%20and%20Mortar",
		"/api/v2/public/courses?type=Brick+and+Mortar",
		"/api/v2/public/classes?search=100%25",
		"/api/v2/public/classes?search=100%",
	} {
		if got := ts.get(http.MethodGet, target, nil); got.Status != http.StatusOK {
			t.Errorf("GET %s = %d %q, want 200", target, got.Status, got.Body)
		}
	}
}

// TestUnescapeLenient: "+" and "%XX" decode; a "%" without two hex digits after it stays.
func TestUnescapeLenient(t *testing.T) {
	for in, want := range map[string]string{
		"":          "",
		"abc":       "abc",
		"a+b":       "a b",
		"%41%62":    "Ab",
		"%4a%4A":    "JJ",
		"100%":      "100%",
		"1%Z9":      "1%Z9",
		"%2":        "%2",
		"%%41":      "%A",
		"x%3Dy%26z": "x=y&z",
		"%C3%A9":    "é",
	} {
		if got := unescapeLenient(in); got != want {
			t.Errorf("unescapeLenient(%q) = %q, want %q", in, got, want)
		}
	}
}
