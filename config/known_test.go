package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestUnknownKeysRefused: a misspelt key in the file or a CATALOGUE_* variable that is no
// key stops Load, naming the key and the nearest known one, instead of being ignored while
// its default is used.
func TestUnknownKeysRefused(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		env        map[string]string
		want       []string
	}{
		{name: "hyphen for underscore", file: "edge:\n  redis-url: redis://127.0.0.1:6379/0\n",
			want: []string{"edge.redis-url: unknown key in ", "(did you mean edge.redis_url?)"}},
		{name: "misspelt section", file: "bulider:\n  keep: 3\n",
			want: []string{"bulider.keep: unknown key in ", "(did you mean builder.keep?)"}},
		{name: "misspelt nested key", file: "edge:\n  jwt:\n    isuer: https://idp.example\n",
			want: []string{"edge.jwt.isuer: unknown key", "(did you mean edge.jwt.issuer?)"}},
		{name: "two at once", file: "timezon: UTC\nstore:\n  regoin: eu-west-1\n",
			want: []string{"timezon: unknown key", "(did you mean timezone?)", "store.regoin: unknown key", "(did you mean store.region?)"}},
		{name: "a section given a value", file: "builder: 5\n",
			want: []string{"builder: a section of keys such as builder.schedule in ", ", not a value (got 5)"}},
		{name: "environment", env: map[string]string{"CATALOGUE_EDGE_REDISURL": "redis://127.0.0.1:6379/0"},
			want: []string{"CATALOGUE_EDGE_REDISURL: unknown environment variable (did you mean CATALOGUE_EDGE_REDIS_URL?)"}},
		{name: "environment, section misspelt", env: map[string]string{"CATALOGUE_BULIDER_KEEP": "3"},
			want: []string{"CATALOGUE_BULIDER_KEEP: unknown environment variable (did you mean CATALOGUE_BUILDER_KEEP?)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			path := ""
			if tt.file != "" {
				path = writeFile(t, tt.file)
			}
			_, err := Load(path, nil)
			if err == nil {
				t.Fatal("Load: no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestKnownKeysAccepted: every declared key is accepted in the file and as its variable,
// sections may be empty, and the test suite's own CATALOGUE_TEST_* variables are no keys.
func TestKnownKeysAccepted(t *testing.T) {
	t.Setenv("CATALOGUE_TEST_SOMETHING", "x")
	t.Setenv("CATALOGUE_EDGE_RATE_LIMIT", "7")
	c, err := Load(writeFile(t, "replica:\nedge:\n  redis_url: redis://127.0.0.1:6379/0\n  jwt:\n    issuer: https://idp.example\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Edge.RedisURL != "redis://127.0.0.1:6379/0" || c.Edge.JWT.Issuer != "https://idp.example" || c.Edge.RateLimit != 7 {
		t.Errorf("Load = %+v, want the file's and the environment's values", c.Edge)
	}
	if _, err := Load("catalogue.example.yaml", nil); err != nil {
		t.Errorf("Load of the example file: %v", err)
	}
}

// TestKubernetesServiceLinksIgnored: Kubernetes gives a pod variables for every Service of
// its namespace (enableServiceLinks, on by default), so a Service named catalogue-edge puts
// CATALOGUE_EDGE_SERVICE_HOST and its companions beside the configuration. They are no
// misspelt keys and must not stop the programs; recognised by their names and their values,
// so that an operator's CATALOGUE_EDGE_PORT=8080 is still refused.
func TestKubernetesServiceLinksIgnored(t *testing.T) {
	for k, v := range map[string]string{
		"CATALOGUE_EDGE_SERVICE_HOST":        "10.96.0.11",
		"CATALOGUE_EDGE_SERVICE_PORT":        "8080",
		"CATALOGUE_EDGE_SERVICE_PORT_HTTP":   "8080",
		"CATALOGUE_EDGE_PORT":                "tcp://10.96.0.11:8080",
		"CATALOGUE_EDGE_PORT_8080_TCP":       "tcp://10.96.0.11:8080",
		"CATALOGUE_EDGE_PORT_8080_TCP_PROTO": "tcp",
		"CATALOGUE_EDGE_PORT_8080_TCP_PORT":  "8080",
		"CATALOGUE_EDGE_PORT_8080_TCP_ADDR":  "10.96.0.11",
		"CATALOGUE_PORT":                     "tcp://[fd00::11]:9090",
		"CATALOGUE_SERVICE_HOST":             "fd00::11",
	} {
		t.Setenv(k, v)
	}
	if _, err := Load("", nil); err != nil {
		t.Fatalf("Load beside Kubernetes' service variables: %v", err)
	}
	for k, v := range map[string]string{"CATALOGUE_EDGE_PORT": "8080", "CATALOGUE_EDGE_SERVICE_HOST": "edge.internal"} {
		t.Run(k+"="+v, func(t *testing.T) {
			t.Setenv(k, v)
			if _, err := Load("", nil); err == nil || !strings.Contains(err.Error(), k+": unknown environment variable") {
				t.Errorf("Load with %s=%s: %v, want it refused as unknown", k, v, err)
			}
		})
	}
}

// TestKeysAreTheDeclaration: the keys and the Config type agree: every field of Config
// (outside its sections' structs) is filled by exactly one key, and every key fills a field.
func TestKeysAreTheDeclaration(t *testing.T) {
	filled := map[string]string{} // field path -> key
	for _, k := range keys {
		path := fieldPath(reflect.TypeFor[Config](), k.Name)
		if path == "" {
			t.Errorf("%s fills no field of Config", k.Name)
			continue
		}
		if other, ok := filled[path]; ok {
			t.Errorf("%s and %s both fill %s", other, k.Name, path)
		}
		filled[path] = k.Name
	}
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for f := range typ.Fields() {
			switch path := prefix + f.Name; {
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, path+".")
			case filled[path] == "":
				t.Errorf("no key fills Config.%s", path)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
}

// fieldPath is the Go path (Edge.JWT.JWKSURL) of the field key fills, or "".
func fieldPath(t reflect.Type, key string) string {
	var names []string
	for _, part := range strings.Split(key, ".") {
		if t.Kind() != reflect.Struct {
			return ""
		}
		i := fieldIndex(t, part)
		if i < 0 {
			return ""
		}
		names = append(names, t.Field(i).Name)
		t = t.Field(i).Type
	}
	return strings.Join(names, ".")
}

// TestVariablesNamedInTheRepositoryAreKeys: every CATALOGUE_* variable that the scripts, the
// units, the README, the folder READMEs, the partner's guide (edge/openapi.json) and this
// folder set or mention is a key's (or the tests' own), so that none of them stops a command
// at start.
func TestVariablesNamedInTheRepositoryAreKeys(t *testing.T) {
	known := map[string]bool{}
	for _, k := range Keys() {
		known[EnvName(k)] = true
	}
	name := regexp.MustCompile(`\bCATALOGUE_[A-Z0-9_]*[A-Z0-9]`)
	for _, root := range []string{"../scripts", "../config", "../README.md", "../Makefile",
		"../builder/README.md", "../edge/README.md", "../cmd/README.md", "../templates/README.md", "../edge/openapi.json"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, n := range name.FindAllString(string(b), -1) {
				if !known[n] && !strings.HasPrefix(n+"_", TestEnvPrefix) {
					t.Errorf("%s names %s, which is no configuration key's variable", path, n)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeysNamedInTheDocsAreKeys: every key the repository's Markdown names in code spans
// (`edge.rate_limit`) is a key or a section of keys, so that renaming or removing a key
// fails here until the guides follow.
func TestKeysNamedInTheDocsAreKeys(t *testing.T) {
	keys := Keys()
	span := regexp.MustCompile("`((?:database|replica|store|templates|builder|edge|feeds|webhooks|log)(?:\\.[a-z_]+)+)`")
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".md"):
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range span.FindAllStringSubmatch(string(b), -1) {
			name := m[1]
			if strings.HasSuffix(name, ".go") || slices.Contains(keys, name) ||
				slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, name+".") }) {
				continue
			}
			t.Errorf("%s names %s, which is no configuration key (did you mean %s?)", path, name, nearest(name, keys))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
