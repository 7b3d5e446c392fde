package templates

import "testing"

// TestEmbeddedOnlyAreTemplates holds the list of templates that cannot be replaced to the
// embedded files: a misspelt name there would let a copy of the real one be ignored again.
func TestEmbeddedOnlyAreTemplates(t *testing.T) {
	s := MustDefault()
	for name := range embeddedOnly {
		if _, ok := s.sql[name]; !ok {
			t.Errorf("embeddedOnly names %s, which is not an embedded template", name)
		}
	}
}
