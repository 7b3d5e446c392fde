package webhook

import (
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
