package config

import (
	"os"
	"reflect"
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

// TestKeysAreDeclaredWhole: every key has a meaning for the table and a comment for the
// example file, a default of its field's own type, and is declared once.
func TestKeysAreDeclaredWhole(t *testing.T) {
	seen := map[string]bool{}
	var c Config
	for _, k := range keys {
		if seen[k.Name] {
			t.Errorf("%s is declared twice", k.Name)
		}
		seen[k.Name] = true
		if k.Meaning == "" || k.Comment == "" {
			t.Errorf("%s lacks its meaning or its comment", k.Name)
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
