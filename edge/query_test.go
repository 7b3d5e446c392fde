package edge

import (
	"net/http"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestMalformedQuery: a query string that does not decode is a 400 on every route that reads
// parameters (D51), never answered as if the broken pair were absent: "afterChangeNumber=12%"
// read as no position would walk the feed from its start, "type=Online%" would list every
// course, and "start=…;" would search without the filter.
func TestMalformedQuery(t *testing.T) {
	f := fixture{id: "query", docs: map[string]string{"/public/class/3": `{"course_id":1}`}, modified: map[string]int64{"/public/class/3": 42}}
	ts := startOn(t, openStore(t, testkit.NewLocalStore(t)), f)
	const (
		escape    = `{"message":"The query string is malformed (invalid URL escape \"%\"): encode each name and value, for example with encodeURIComponent."}` + "\n"
		escapeZZ  = `{"message":"The query string is malformed (invalid URL escape \"%ZZ\"): encode each name and value, for example with encodeURIComponent."}` + "\n"
		semicolon = `{"message":"The query string is malformed (invalid semicolon separator in query): encode each name and value, for example with encodeURIComponent."}` + "\n"
	)
	for _, tc := range []struct{ target, body string }{
		{"/api/v2/public/feeds/classes?afterChangeNumber=12%", escape},
		{"/api/v2/public/feeds/classes?afterChangeNumber=1%ZZ", escapeZZ},
		{"/api/v2/public/feeds/courses?afterChangeNumber=5;x=1", semicolon},
		{"/api/v2/public/feeds/classes?afterChangeNumber=5&utm=%", escape}, // even in a pair D16 ignores
		{"/api/v2/public/courses?type=Online%", escape},
		{"/api/v2/public/courses?type=Online;", semicolon},
		{"/api/v2/public/classes?start=01-31-2027;", semicolon},
		{"/api/v2/public/classes?search=100%", escape},
		{"/api/v2/public/course/1/classes?page=2%", escape},
	} {
		got := ts.get(http.MethodGet, tc.target, nil, "Content-Type", "Cache-Control")
		if got.Status != http.StatusBadRequest || got.Body != tc.body || got.Headers["Cache-Control"] != "no-store" {
			t.Errorf("GET %s = %d %q %v, want 400 %q, no-store", tc.target, got.Status, got.Body, got.Headers, tc.body)
		}
	}
	// Well-formed queries are read as before.
	for _, target := range []string{
		"/api/v2/public/feeds/classes?afterChangeNumber=12%34", // %34 is "4": position 124
		"/api/v2/public/courses?type=Brick%20and%20Mortar",
		"/api/v2/public/classes?search=100%25",
	} {
		if got := ts.get(http.MethodGet, target, nil); got.Status != http.StatusOK {
			t.Errorf("GET %s = %d %q, want 200", target, got.Status, got.Body)
		}
	}
}
