package edge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHeaderTextValues(t *testing.T) {
	long := strings.Repeat("9", 120) // more than buf holds: append moves it elsewhere
	tests := []struct {
		name          string
		text          string
		split         int
		first, second []string
	}{
		{"one value", "5f0e1d2c3b4a-17", -1, []string{"5f0e1d2c3b4a-17"}, nil},
		{"two values", "6059", 2, []string{"60"}, []string{"59"}},
		{"an empty second value", "60", 2, []string{"60"}, []string{""}},
		{"longer than the buffer", long + "1", 120, []string{long}, []string{"1"}},
	}
	for _, tt := range tests {
		v := new(headerText)
		first, second := v.values(append(v.buf[:0], tt.text...), tt.split)
		if diff := cmp.Diff([][]string{tt.first, tt.second}, [][]string{first, second}); diff != "" {
			t.Errorf("values(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
		for _, s := range [][]string{first, second} {
			if cap(s) != len(s) {
				t.Errorf("values(%s): a value with capacity %d for length %d, which an append would write into", tt.name, cap(s), len(s))
			}
		}
	}
}
