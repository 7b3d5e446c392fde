package jsonstr

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
)

var seeds = []string{"", "plain", `"\`, "<>&", "\x00\x1f\x7f\b\f\n\r\t", "\u2028\u2029", "\xff\xfe", "é\xc3", "Ωmega 😀", "a\x00b<c>d&e\u2028f"}

// TestAppendExamples holds both modes to quotings written out by hand, so that a wrong
// library version under the fuzz tests could not hide a change.
func TestAppendExamples(t *testing.T) {
	for _, tc := range []struct {
		in         string
		json, slog string
	}{
		{"", `""`, `""`},
		{`a"b\c`, `"a\"b\\c"`, `"a\"b\\c"`},
		{"<a&b>", `"\u003ca\u0026b\u003e"`, `"<a&b>"`},
		{"\b\f\n\r\t\x01", `"\b\f\n\r\t\u0001"`, `"\u0008\u000c\n\r\t\u0001"`},
		{"x\xffy", `"x\ufffdy"`, `"x\ufffdy"`},
		{"\u2028\u2029", `"\u2028\u2029"`, `"\u2028\u2029"`},
		{"Ωmega 😀\x7f", "\"Ωmega 😀\x7f\"", "\"Ωmega 😀\x7f\""},
	} {
		if got := string(Append(nil, tc.in, EncodingJSON)); got != tc.json {
			t.Errorf("Append(%q, EncodingJSON) = %s, want %s", tc.in, got, tc.json)
		}
		if got := string(Append(nil, tc.in, Slog)); got != tc.slog {
			t.Errorf("Append(%q, Slog) = %s, want %s", tc.in, got, tc.slog)
		}
	}
}

func FuzzEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Append([]byte("x"), s, EncodingJSON); string(got) != "x"+string(want) {
			t.Fatalf("Append(%q) = %s, want %s as encoding/json writes it", s, got[1:], want)
		}
	})
}

func FuzzSlog(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{
			ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
				if len(groups) == 0 && a.Key != "k" {
					return slog.Attr{} // time, level and msg: only k's quoting is compared
				}
				return a
			},
		})
		slog.New(h).Info("", "k", s)
		want := `{"k":` + string(Append(nil, s, Slog)) + "}\n"
		if buf.String() != want {
			t.Fatalf("Append(%q) = %s, want it as log/slog writes it: %s", s, want, buf.String())
		}
	})
}
