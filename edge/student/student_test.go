package student

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Class documents as the builder writes them (compact JSON, HTML not escaped, a newline at
// the end), one online and one with a room whose schedule holds what a naive splice of the
// two members would trip over.
const (
	onlineDoc = `{"course_id":12,"course_name":"Welding","course_type":"Online","start":"2027-04-01","end":"2027-04-03",` +
		`"schedule":null,"cost":450,"can_register":true,"location":"online","down_payment":null,` +
		`"registration_id":null,"prev_reg_test_date":null,"open_seats":null}` + "\n"
	roomDoc = `{"course_id":3,"course_name":"Rigging & <Safety>","course_type":"Blended","start":"2027-05-01","end":"2027-05-02",` +
		`"schedule":"Mon \"registration_id\":null, 9–5 ü","cost":300,"can_register":false,` +
		`"location":{"name":"HQ","room":"A","city":"Austin","state":"TX","zip":"78701","country":"US"},` +
		`"down_payment":"30000","registration_id":null,"prev_reg_test_date":null,"open_seats":0}` + "\n"
)

func ptr[T any](v T) *T { return &v }

func TestAppendWith(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		fields Fields
		want   string
	}{
		{"no fields: the document unchanged", onlineDoc, Fields{}, onlineDoc},
		{"no fields: the document unchanged, escapes and all", roomDoc, Fields{}, roomDoc},
		{"both fields", onlineDoc, Fields{ptr(int64(100)), ptr(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))},
			`{"course_id":12,"course_name":"Welding","course_type":"Online","start":"2027-04-01","end":"2027-04-03",` +
				`"schedule":null,"cost":450,"can_register":true,"location":"online","down_payment":null,` +
				`"registration_id":100,"prev_reg_test_date":"2026-09-01","open_seats":null}` + "\n"},
		{"registration only; the schedule's lookalike untouched", roomDoc, Fields{RegistrationID: ptr(int64(9007199254740993))},
			`{"course_id":3,"course_name":"Rigging & <Safety>","course_type":"Blended","start":"2027-05-01","end":"2027-05-02",` +
				`"schedule":"Mon \"registration_id\":null, 9–5 ü","cost":300,"can_register":false,` +
				`"location":{"name":"HQ","room":"A","city":"Austin","state":"TX","zip":"78701","country":"US"},` +
				`"down_payment":"30000","registration_id":9007199254740993,"prev_reg_test_date":null,"open_seats":0}` + "\n"},
		{"test date only", roomDoc, Fields{PrevTestDate: ptr(time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC))},
			`{"course_id":3,"course_name":"Rigging & <Safety>","course_type":"Blended","start":"2027-05-01","end":"2027-05-02",` +
				`"schedule":"Mon \"registration_id\":null, 9–5 ü","cost":300,"can_register":false,` +
				`"location":{"name":"HQ","room":"A","city":"Austin","state":"TX","zip":"78701","country":"US"},` +
				`"down_payment":"30000","registration_id":null,"prev_reg_test_date":"2027-01-31","open_seats":0}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := string(d.AppendWith([]byte("prefix:"), tt.fields))
			if diff := cmp.Diff("prefix:"+tt.want, got); diff != "" {
				t.Errorf("AppendWith(%+v) mismatch (-want +got):\n%s", tt.fields, diff)
			}
		})
	}
}

func TestParseCourseID(t *testing.T) {
	for doc, want := range map[string]int64{onlineDoc: 12, roomDoc: 3} {
		d, err := Parse([]byte(doc))
		if err != nil || d.CourseID() != want {
			t.Errorf("Parse(%.40s...).CourseID() = %v, %v; want %d", doc, d, err, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":                    "",
		"an array":                 `[1,2]`,
		"not JSON":                 `{"course_id":1,`,
		"no course_id":             `{"registration_id":null,"prev_reg_test_date":null}`,
		"course_id not an integer": `{"course_id":"1","registration_id":null,"prev_reg_test_date":null}`,
		"no registration_id":       `{"course_id":1,"prev_reg_test_date":null}`,
		"no prev_reg_test_date":    `{"course_id":1,"registration_id":null}`,
		"data after the object":    `{"course_id":1,"registration_id":null,"prev_reg_test_date":null}{}`,
	} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrNotClassDocument) {
			t.Errorf("Parse(%s) = %v, want ErrNotClassDocument", name, err)
		}
	}
}
