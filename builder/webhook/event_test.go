package webhook

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBodyTimestampHasMilliseconds: the body's timestamp always has its three digits of
// milliseconds, as the guide's example shows ("2027-03-01T09:00:17.123Z"): Go's RFC 3339
// dropped trailing zeros, so one message in ten or so read "...:30.17Z", and one on a whole
// second "...:30Z".
func TestBodyTimestampHasMilliseconds(t *testing.T) {
	for at, want := range map[time.Time]string{
		time.Date(2027, 3, 1, 9, 0, 30, 170_000_000, time.UTC):                     `"timestamp":"2027-03-01T09:00:30.170Z"`,
		time.Date(2027, 3, 1, 9, 0, 30, 0, time.UTC):                               `"timestamp":"2027-03-01T09:00:30.000Z"`,
		time.Date(2027, 3, 1, 10, 0, 30, 123_456_789, time.FixedZone("CET", 3600)): `"timestamp":"2027-03-01T09:00:30.123Z"`,
	} {
		b, err := Body(TypePing, at, Ping{Endpoint: 1})
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("Body at %v = %s, %v; want it to hold %s", at, b, err, want)
		}
	}
}

// TestChangedLeavesOutLongLists (D41): a list of 1,000 ids is sent whole; one of 1,001 is
// left out, with "truncated": true, and the other list is still sent; empty lists are [].
func TestChangedLeavesOutLongLists(t *testing.T) {
	ids := func(n int) []int64 {
		l := make([]int64, n)
		for i := range l {
			l[i] = int64(i + 1)
		}
		return l
	}
	at := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name             string
		courses, classes []int64
		want             string // the data object's keys and what they hold
	}{
		{"empty", nil, nil, `courses:0 classes:0 truncated:false`},
		{"1,000 classes", []int64{7}, ids(1000), `courses:1 classes:1000 truncated:false`},
		{"1,001 classes", []int64{7}, ids(1001), `courses:1 classes:absent truncated:true`},
		{"1,001 courses", ids(1001), []int64{9}, `courses:absent classes:1 truncated:true`},
	} {
		body, err := Body(TypeChanged, at, Changed{Snapshot: "s", Courses: tc.courses, Classes: tc.classes})
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			t.Fatal(err)
		}
		count := func(key string) string {
			raw, ok := msg.Data[key]
			if !ok {
				return "absent"
			}
			var l []int64
			if err := json.Unmarshal(raw, &l); err != nil || l == nil {
				return "not a list: " + string(raw)
			}
			return strconv.Itoa(len(l))
		}
		got := fmt.Sprintf("courses:%s classes:%s truncated:%t", count("courses"), count("classes"), string(msg.Data["truncated"]) == "true")
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
