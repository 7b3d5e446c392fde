package config

import (
	"strings"
	"testing"
)

// TestBadValueSaysWhatIsExpected: a value that does not decode names its key, the
// environment variable it came from (as an empty one does), and what the key takes, without
// Go's parser messages: CATALOGUE_EDGE_RATE_LIMIT=abc gave "edge.rate_limit: cannot parse
// value as 'int': strconv.ParseInt: invalid syntax" (an operator's review).
func TestBadValueSaysWhatIsExpected(t *testing.T) {
	for _, tt := range []struct{ name, value, want string }{
		{"CATALOGUE_EDGE_RATE_LIMIT", "abc", `edge.rate_limit: CATALOGUE_EDGE_RATE_LIMIT is "abc", not a whole number`},
		{"CATALOGUE_EDGE_RATE_LIMIT", "1.5", `edge.rate_limit: CATALOGUE_EDGE_RATE_LIMIT is "1.5", not a whole number`},
		{"CATALOGUE_BUILDER_MAX_SHRINK", "half", `builder.max_shrink: CATALOGUE_BUILDER_MAX_SHRINK is "half", not a number such as 0.5`},
		{"CATALOGUE_LOG_REQUESTS", "maybe", `log.requests: CATALOGUE_LOG_REQUESTS is "maybe", not true or false`},
		{"CATALOGUE_EDGE_POLL_INTERVAL", "abc", `edge.poll_interval: CATALOGUE_EDGE_POLL_INTERVAL is "abc", not a duration such as "5s" or "500ms"`},
		{"CATALOGUE_EDGE_POLL_INTERVAL", "5", `edge.poll_interval: CATALOGUE_EDGE_POLL_INTERVAL is "5", not a duration such as "5s" or "500ms"`},
	} {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			t.Setenv(tt.name, tt.value)
			_, err := Load("", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "time:") {
				t.Errorf("Load with %s=%s: error %v, want %q", tt.name, tt.value, err, tt.want)
			}
		})
	}
	path := writeFile(t, "edge:\n  rate_limit: abc\nlog:\n  requests: maybe\n")
	_, err := Load(path, nil)
	for _, want := range []string{`edge.rate_limit: "abc" is not a whole number`, `log.requests: "maybe" is not true or false`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load of a file with bad values: error %v, want %q", err, want)
		}
	}
}
