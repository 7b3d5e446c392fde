package freshness

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangesAdd(t *testing.T) {
	var s Changes
	for _, p := range []string{
		`{"table": "courses", "ids": [3, 1]}`,
		`{"table": "classes", "ids": [101, 102], "course_ids": [1, 2]}`,
		`{"table": "registrations", "class_ids": [102, 103]}`,
		`{"table": "rooms", "ids": [10]}`,
		`{"table": "locations", "ids": [7]}`,
		`{"table": "courses", "ids": [1]}`,
	} {
		if err := s.Add(p); err != nil {
			t.Fatalf("Add(%s): %v", p, err)
		}
	}
	got := map[string][]int64{
		"courses": s.Courses(), "classes": s.Classes(), "registration classes": s.RegClasses(),
		"class courses": s.ClassCourses(), "rooms": s.Rooms(), "locations": s.Locations(),
	}
	want := map[string][]int64{
		"courses": {1, 3}, "classes": {101, 102}, "registration classes": {102, 103},
		"class courses": {1, 2}, "rooms": {10}, "locations": {7},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changes after Add mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"courses": 2, "classes": 1, "registrations": 1, "rooms": 1, "locations": 1}, s.Notifications()); diff != "" {
		t.Errorf("Notifications mismatch (-want +got):\n%s", diff)
	}
	if s.All() || s.Empty() {
		t.Errorf("All() = %v, Empty() = %v; want false, false", s.All(), s.Empty())
	}
}

// TestSetEverything: what a set cannot list makes it say "everything".
func TestChangesEverything(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		wantErr string
	}{
		{"the trigger's fallback", `{"table": "registrations", "all": true}`, ""},
		{"not JSON", `classes 101`, "read the notification"},
		{"an unknown table", `{"table": "invoices", "ids": [1]}`, "names no table of the catalogue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Changes
			_ = s.Add(`{"table": "courses", "ids": [1]}`)
			err := s.Add(tt.payload)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Add(%s) error = %v, want %q", tt.payload, err, tt.wantErr)
			}
			if !s.All() || s.Courses() != nil {
				t.Errorf("after Add(%s): All() = %v, Courses() = %v; want true and nil", tt.payload, s.All(), s.Courses())
			}
			_ = s.Add(`{"table": "courses", "ids": [2]}`)
			if !s.All() || s.Courses() != nil {
				t.Errorf("a set that says everything listed more: All() = %v, Courses() = %v", s.All(), s.Courses())
			}
		})
	}
}

func TestChangesGivesUpPastMaxIDs(t *testing.T) {
	var s Changes
	for i := range MaxIDs {
		if err := s.Add(`{"table": "registrations", "class_ids": [` + strconv.Itoa(i) + `]}`); err != nil {
			t.Fatal(err)
		}
	}
	if s.All() {
		t.Fatalf("All() after %d ids, want false", MaxIDs)
	}
	_ = s.Add(`{"table": "rooms", "ids": [1]}`)
	if !s.All() {
		t.Errorf("All() after %d ids = false, want true", MaxIDs+1)
	}
}

func TestLSN(t *testing.T) {
	tests := []struct {
		in        string
		want      LSN
		recordEnd string
	}{
		{"0/0", 0, "0/0"},
		{"16/B374D848", 0x16B374D848, "16/B374D848"},
		{"0/3002018", 0x3002018, "0/3002000"},   // just past a short page header
		{"1/3000028", 0x103000028, "1/3000000"}, // just past a segment's long header
		{"0/3002030", 0x3002030, "0/3002030"},   // a record's end
	}
	for _, tt := range tests {
		got, err := ParseLSN(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseLSN(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		if got.String() != tt.in {
			t.Errorf("ParseLSN(%q).String() = %q", tt.in, got.String())
		}
		if e := got.RecordEnd().String(); e != tt.recordEnd {
			t.Errorf("ParseLSN(%q).RecordEnd() = %s, want %s", tt.in, e, tt.recordEnd)
		}
	}
	for _, bad := range []string{"", "16", "16/", "/1", "G/1", "1/100000000"} {
		if _, err := ParseLSN(bad); err == nil {
			t.Errorf("ParseLSN(%q): no error", bad)
		}
	}
}
