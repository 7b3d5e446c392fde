package edge

import (
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseID(t *testing.T) {
	type result struct {
		ID int64
		OK bool
	}
	for _, tt := range []struct {
		in   string
		want result
	}{
		{"1", result{1, true}},
		{"42", result{42, true}},
		{"1234567890", result{1234567890, true}},
		{"9223372036854775807", result{9223372036854775807, true}},
		{"9223372036854775808", result{0, false}},  // past int64
		{"18446744073709551615", result{0, false}}, // 20 digits
		{"99999999999999999999", result{0, false}},
		{"", result{0, false}},
		{"0", result{0, false}},
		{"00", result{0, false}},
		{"01", result{0, false}}, // leading zero: one URL per item
		{"-1", result{0, false}},
		{"+1", result{0, false}},
		{"1.5", result{0, false}},
		{"1.0", result{0, false}},
		{"1e3", result{0, false}},
		{"0x10", result{0, false}},
		{"abc", result{0, false}},
		{" 1", result{0, false}},
		{"1 ", result{0, false}},
		{"1/", result{0, false}},
		{"١", result{0, false}}, // an Arabic-Indic digit is not base-10 ASCII
		{"１", result{0, false}}, // nor is a full-width one
	} {
		id, ok := parseID(tt.in)
		if diff := cmp.Diff(tt.want, result{id, ok}); diff != "" {
			t.Errorf("parseID(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseTypes(t *testing.T) {
	type result struct {
		Types []string
		OK    bool
	}
	for _, tt := range []struct {
		query string
		want  result
	}{
		{"", result{nil, true}},
		{"limit=5&page=2", result{nil, true}},
		{"type=Online", result{[]string{"Online"}, true}},
		{"type=Brick+and+Mortar", result{[]string{"Brick and Mortar"}, true}},
		{"type[]=Online&type[]=Blended", result{[]string{"Blended", "Online"}, true}},
		{"type=Online&type=Blended", result{[]string{"Blended", "Online"}, true}},
		{"type[0]=Online&type[1]=Blended", result{[]string{"Blended", "Online"}, true}},
		{"type=Online&type[]=Online", result{[]string{"Online", "Online"}, true}},
		{"type=&type[]=", result{nil, true}},
		{"type=Online&type=", result{[]string{"Online"}, true}},
		{"types=Webinar&type[x]=Webinar&typeX=Webinar", result{nil, true}}, // other keys are not the type (D16)
		{"type=online", result{nil, false}},
		{"type=ONLINE", result{nil, false}},
		{"type=Online+", result{nil, false}},
		{"type=Brick%20%26%20Mortar", result{nil, false}},
		{"type[]=Online&type[]=Webinar", result{nil, false}},
		{"type[2]=Hybrid", result{nil, false}},
	} {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		types, ok := parseTypes(q)
		slices.Sort(types) // map order of keys: the caller sorts through CoursesRoute
		if diff := cmp.Diff(tt.want, result{types, ok}); diff != "" {
			t.Errorf("parseTypes(%q) mismatch (-want +got):\n%s", tt.query, diff)
		}
	}
}
