package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The files generated from keys (go generate ./config); TestGeneratedDocsAreCurrent fails
// when the committed ones differ from what ExampleFile and KeyTable give.
const (
	ExampleFileName = "catalogue.example.yaml"
	KeyTableFile    = "README.md" // between KeyTableBegin and KeyTableEnd
	KeyTableBegin   = "<!-- key table: generated from keys.go by go generate ./config; edit keys.go -->\n"
	KeyTableEnd     = "<!-- end of the key table -->\n"
)

// exampleHeader opens the example file.
const exampleHeader = `# catalogue.example.yaml: every configuration key of the Public Catalogue API, with its
# default. Both binaries read the same file: ` + "`builder COMMAND --config FILE`" + ` (the flag after
# the command, as ` + "`builder serve --config FILE`" + `) and ` + "`edge --config FILE`" + `.
#
# Every key can also be set by an environment variable, CATALOGUE_ + the key in upper case
# with "." as "_" (database.url is CATALOGUE_DATABASE_URL), and by a command's flags where it
# has them. Flags win over the environment, which wins over this file, which wins over the
# defaults. The configuration is checked at start; a bad value is refused with its key named,
# and so is a key this file does not show, or a CATALOGUE_* variable that is no key's, with
# the nearest known key (a misspelt key would otherwise leave its default in force).
# Dnn names a decision of the API, listed in edge/DECISIONS.md.
#
# Generated from config/keys.go by go generate ./config: edit that file, not this one.
`

// commentWidth is the widest line of the example file's comments, indentation included.
const commentWidth = 92

// ExampleFile returns catalogue.example.yaml: every key under its section, with its comment
// and its default, which loading the file gives back (TestExampleFileDocumentsEveryKey).
func ExampleFile() []byte {
	var b strings.Builder
	b.WriteString(exampleHeader)
	d := reflect.ValueOf(Default())
	var open []string // the sections the last key was in
	for _, k := range keys {
		parts := strings.Split(k.Name, ".")
		path, leaf := parts[:len(parts)-1], parts[len(parts)-1]
		same := 0
		for same < len(open) && same < len(path) && open[same] == path[same] {
			same++
		}
		if same == 0 {
			b.WriteString("\n") // a blank line between top-level entries
		}
		for i := same; i < len(path); i++ {
			indent := strings.Repeat("  ", i)
			writeComment(&b, indent, strings.Fields(sections[strings.Join(path[:i+1], ".")])...)
			b.WriteString(indent + path[i] + ":\n")
		}
		open = path
		indent := strings.Repeat("  ", len(path))
		value := yamlValue(fieldOf(d, k.Name))
		shown := value
		if isEmpty(fieldOf(d, k.Name)) {
			shown = "empty."
		}
		writeComment(&b, indent, append(strings.Fields(plainText(k.Doc)), "Default: "+shown)...)
		fmt.Fprintf(&b, "%s%s: %s\n", indent, leaf, value)
	}
	return []byte(b.String())
}

// writeComment writes words as YAML comment lines at indent, wrapped at commentWidth
// between words ("Default: 1s" is one).
func writeComment(b *strings.Builder, indent string, words ...string) {
	line := ""
	for _, w := range words {
		if line != "" && len(indent)+2+len(line)+1+len(w) > commentWidth {
			b.WriteString(indent + "# " + line + "\n")
			line = ""
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	if line != "" {
		b.WriteString(indent + "# " + line + "\n")
	}
}

// KeyTable returns the Markdown table of every key: its environment variable, its default
// and its meaning.
func KeyTable() string {
	var b strings.Builder
	b.WriteString("| key | environment | default | meaning |\n|---|---|---|---|\n")
	d := reflect.ValueOf(Default())
	for _, k := range keys {
		shown := k.Shown
		switch f := fieldOf(d, k.Name); {
		case shown != "":
		case isEmpty(f):
			shown = "none"
		default:
			shown = "`" + strings.Trim(yamlValue(f), `"`) + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", k.Name, EnvName(k.Name), shown, firstSentence(k.Doc))
	}
	return b.String()
}

// firstSentence is doc up to its first period followed by a space (the period included):
// the key table's meaning. A Doc therefore avoids "e.g." and the like in its first sentence.
func firstSentence(doc string) string {
	if i := strings.Index(doc, ". "); i >= 0 {
		return doc[:i+1]
	}
	return doc
}

// markdownLink is a Markdown link, [text](target).
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// plainText is a Doc as the example file shows it: links as their text, code spans without
// their backquotes.
func plainText(doc string) string {
	return strings.ReplaceAll(markdownLink.ReplaceAllString(doc, "$1"), "`", "")
}

// isEmpty reports whether a default is the empty string or list (durations and numbers
// are shown even when zero).
func isEmpty(v reflect.Value) bool {
	return (v.Kind() == reflect.String || v.Kind() == reflect.Slice) && v.Len() == 0
}

// yamlValue writes a default as the example file shows it: strings quoted, durations as an
// operator writes them (1h, not 1h0m0s).
func yamlValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case time.Duration:
		return shortDuration(x)
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// shortDuration is d without its zero minutes and seconds: 1h, 1m, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// SpliceKeyTable returns readme with the text between KeyTableBegin and KeyTableEnd
// replaced by KeyTable.
func SpliceKeyTable(readme []byte) ([]byte, error) {
	s := string(readme)
	begin, end := strings.Index(s, KeyTableBegin), strings.Index(s, KeyTableEnd)
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("%s lacks the markers %q and %q", KeyTableFile, KeyTableBegin, KeyTableEnd)
	}
	return []byte(s[:begin+len(KeyTableBegin)] + KeyTable() + s[end:]), nil
}
