package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadTokens(t *testing.T) {
	tests := []struct {
		name, file string
		tokens     []string
		limits     []int
		err        bool
	}{
		{"tokens alone", "pcat_a\npcat_b\n", []string{"pcat_a", "pcat_b"}, []int{60, 60}, false},
		{"limits of their own", "pcat_a 30\n\npcat_b\npcat_c 120\n", []string{"pcat_a", "pcat_b", "pcat_c"}, []int{30, 60, 120}, false},
		{"a limit that is not one", "pcat_a x\n", nil, nil, true},
		{"a zero limit", "pcat_a 0\n", nil, nil, true},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "tokens.txt")
		if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
			t.Fatal(err)
		}
		tokens, limits, err := readTokens(path, 60)
		if (err != nil) != tt.err {
			t.Errorf("readTokens(%q) error = %v, want error %v", tt.name, err, tt.err)
		}
		if diff := cmp.Diff(tt.tokens, tokens); diff != "" {
			t.Errorf("readTokens(%q) tokens mismatch (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.limits, limits); diff != "" {
			t.Errorf("readTokens(%q) limits mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
