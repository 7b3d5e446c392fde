package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/store"
)

// TestOpen: the URL's scheme picks the implementation (seen in String), and anything else is
// refused. No request is made, so no service is needed.
func TestOpen(t *testing.T) {
	tests := []struct {
		url  string
		want string // the store's String, or "" when Open must fail
	}{
		{"file:///srv/catalogue", "file:///srv/catalogue"},
		{"file://./data/catalogue", "file://data/catalogue"},
		{"s3://bucket/catalogue", "s3://bucket/catalogue (endpoint http://127.0.0.1:9)"},
		{"s3://bucket", "s3://bucket (endpoint http://127.0.0.1:9)"},
		{"s3:///catalogue", ""},
		{"http://bucket/catalogue", ""},
		{"/srv/catalogue", ""},
		{"", ""},
	}
	for _, tt := range tests {
		s, err := store.Open(context.Background(), store.Options{URL: tt.url, Endpoint: "http://127.0.0.1:9", Region: "us-east-1"})
		if tt.want == "" {
			if err == nil {
				t.Errorf("Open(%q) = %v; want an error", tt.url, s)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tt.url, err)
			continue
		}
		if diff := cmp.Diff(tt.want, s.String()); diff != "" {
			t.Errorf("Open(%q).String() mismatch (-want +got):\n%s", tt.url, diff)
		}
	}
}
