package snapshot

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUsedHashes(t *testing.T) {
	hash := func(s string) string { return Hash([]byte(s)) }
	a, b, c := hash("a"), hash("b"), hash("c")
	m := Manifest{ID: "s1", Documents: map[string]Entry{
		"/public/courses?type=Blended&type=Online": {Hash: a, Size: 1}, // & is written as \u0026
		"/public/course/1":                         {Hash: b, Size: 1},
	}}
	plain, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// The same manifest with the first hex digit of b spelt as an escape: still valid JSON
	// that references b, which only decoding sees.
	escaped := strings.Replace(string(plain), b, fmt.Sprintf(`\u%04x`, b[0])+b[1:], 1)
	many := []string{a, c}
	for i := range substringLimit {
		many = append(many, hash(fmt.Sprint(i)))
	}
	tests := []struct {
		name     string
		manifest string
		hashes   []string
		want     []string
	}{
		{"substring search", string(plain), []string{a, b, c}, []string{a, b}},
		{"none used", string(plain), []string{c}, nil},
		{"escaped hex digit", escaped, []string{a, b, c}, []string{a, b}},
		{"more than the substring limit", string(plain), many, []string{a}},
	}
	for _, tt := range tests {
		got, err := UsedHashes([]byte(tt.manifest), "s1", tt.hashes)
		if err != nil {
			t.Fatalf("UsedHashes(%s): %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("UsedHashes(%q) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
	if _, err := UsedHashes(plain[:len(plain)/2], "s1", []string{a}); err == nil {
		t.Errorf("UsedHashes of a truncated manifest succeeded, want an error")
	}
}

func TestEscapesHexDigit(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"r":"a\u0026b"}`, false},
		{`{"r":"\u003c\u003e\u2028"}`, false},
		{`{"h":"\u0030"}`, true},
		{`{"h":"\u0039"}`, true},
		{`{"h":"\u0061"}`, true},
		{`{"h":"\u0066"}`, true},
		{`{"h":"\u0067"}`, false},
		{`{"h":"\u003a"}`, false},
		{`no escape`, false},
	}
	for _, tt := range tests {
		if got := escapesHexDigit([]byte(tt.in)); got != tt.want {
			t.Errorf("escapesHexDigit(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestScanHashes(t *testing.T) {
	a, b := Hash([]byte("a")), Hash([]byte("b"))
	m := Manifest{ID: "s1", Documents: map[string]Entry{
		"/public/courses?type=Blended&type=Online": {Hash: a, Size: 1},
		"/public/course/1":                         {Hash: b, Size: 1},
	}}
	plain, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got := ScanHashes(plain)
	slices.Sort(got)
	want := []string{a, b}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ScanHashes(manifest) mismatch (-want +got):\n%s", diff)
	}
	// Not hashes: too short, upper case, or cut off.
	for _, in := range []string{`{"sha256":"abc"}`, `{"sha256":"` + strings.ToUpper(a) + `"}`, `{"sha256":"` + a} {
		if got := ScanHashes([]byte(in)); got != nil {
			t.Errorf("ScanHashes(%q) = %q, want none", in, got)
		}
	}
}
