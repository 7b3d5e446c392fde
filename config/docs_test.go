package config

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedDocsAreCurrent: the example file and the key table of README.md are what the
// declaration of the keys (keys.go) gives, so that neither can drift from the code.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	example, err := os.ReadFile(ExampleFileName)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(ExampleFile()), string(example)); diff != "" {
		t.Errorf("%s differs from keys.go; run go generate ./config (-generated +committed):\n%s", ExampleFileName, diff)
	}
	readme, err := os.ReadFile(KeyTableFile)
	if err != nil {
		t.Fatal(err)
	}
	spliced, err := SpliceKeyTable(readme)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(spliced), string(readme)); diff != "" {
		t.Errorf("the key table of %s differs from keys.go; run go generate ./config (-generated +committed):\n%s", KeyTableFile, diff)
	}
}

// TestKeysAreDeclaredWhole: every key has its text (the table's meaning and the example
// file's comment: TestKeyDocsSplit), a default of its field's own type, and is declared once.
func TestKeysAreDeclaredWhole(t *testing.T) {
	seen := map[string]bool{}
	var c Config
	for _, k := range keys {
		if seen[k.Name] {
			t.Errorf("%s is declared twice", k.Name)
		}
		seen[k.Name] = true
		if k.Doc == "" {
			t.Errorf("%s lacks its Doc: the table's meaning and the example file's comment", k.Name)
		}
		if fieldPath(reflect.TypeOf(c), k.Name) == "" {
			t.Errorf("%s fills no field of Config", k.Name)
			continue
		}
		if want := fieldOf(reflect.ValueOf(c), k.Name).Type(); k.Default != nil && reflect.TypeOf(k.Default) != want {
			t.Errorf("%s: default %#v is a %T, the field a %v", k.Name, k.Default, k.Default, want)
		}
	}
}

// TestKeyDocsSplit: every key's Doc splits into a whole first sentence, the key table's
// meaning, so that no cell of the table is empty or a sentence cut inside a parenthesis, a
// code span or an abbreviation; and the Doc is Markdown the table can hold and the example
// file can show as plain text.
func TestKeyDocsSplit(t *testing.T) {
	for _, k := range keys {
		first := firstSentence(k.Doc)
		if !strings.HasSuffix(first, ".") || len(first) < len("The S3 region.") {
			t.Errorf("%s: the table's meaning %q is not a sentence ending with a period", k.Name, first)
		}
		if strings.Count(first, "(") != strings.Count(first, ")") || strings.Count(first, "`")%2 != 0 {
			t.Errorf("%s: the first sentence %q ends inside a parenthesis or a code span", k.Name, first)
		}
		for _, abbr := range []string{"e.g.", "i.e.", "etc."} {
			if strings.HasSuffix(first, abbr) {
				t.Errorf("%s: the first sentence %q ends at the abbreviation %q", k.Name, first, abbr)
			}
		}
		if !strings.HasSuffix(k.Doc, ".") {
			t.Errorf("%s: the Doc does not end with a period", k.Name)
		}
		if strings.ContainsAny(k.Doc, "|\n") {
			t.Errorf("%s: the Doc holds a | or a line break, which would break the table's row", k.Name)
		}
		if plain := plainText(k.Doc); strings.ContainsAny(plain, "`") || strings.Contains(plain, "](") {
			t.Errorf("%s: the example file's comment keeps Markdown: %q", k.Name, plain)
		}
	}
}
