package student

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzDocument: whatever Parse accepts, AppendWith turns into valid JSON that holds the same
// members as the input but for the two per-student values, which hold the fields given.
func FuzzDocument(f *testing.F) {
	for _, doc := range []string{onlineDoc, roomDoc, `{"course_id":1,"registration_id":null,"prev_reg_test_date":null}`} {
		f.Add(doc)
	}
	id, date := int64(42), time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, doc string) {
		d, err := Parse([]byte(doc))
		if err != nil {
			return
		}
		var in map[string]any
		if err := json.Unmarshal([]byte(doc), &in); err != nil {
			t.Fatalf("Parse accepted %q, which is not a JSON object: %v", doc, err)
		}
		var out map[string]any
		got := d.AppendWith(nil, Fields{&id, &date})
		if err := json.Unmarshal(got, &out); err != nil {
			t.Fatalf("AppendWith(%q) = %q, not JSON: %v", doc, got, err)
		}
		in[keyRegistrationID], in[keyPrevTestDate] = float64(42), "2026-02-03"
		if diff := cmp.Diff(in, out); diff != "" {
			t.Errorf("AppendWith(%q) mismatch (-want +got):\n%s", doc, diff)
		}
	})
}
