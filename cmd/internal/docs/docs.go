// Package docs reads the repository's documentation for the tests that hold it to the code:
// every Markdown file (the README, the folder READMEs, the operator's reference, the
// decisions, the benchmark results) and the partner's guide, which is the Markdown of
// edge/openapi.json's info.description. Its own tests check that the README stays short
// and that every relative link resolves; cmd/builder's check the commands they name.
package docs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Guide is the name Files gives the partner's guide.
const Guide = "edge/openapi.json"

// Files returns the text of every Markdown file under root, by slash-separated path from
// root, and the partner's guide under the name Guide. Folders that tools and runs fill
// (bin/, data/, node_modules/) and hidden ones are skipped.
func Files(root string) (map[string]string, error) {
	docs := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel != "." && (rel == "bin" || rel == "data" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(rel, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		docs[rel] = string(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	guide, err := ReadGuide(filepath.Join(root, filepath.FromSlash(Guide)))
	docs[Guide] = guide
	return docs, err
}

// ReadGuide returns the partner's guide: info.description of the OpenAPI document at path.
func ReadGuide(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var doc struct {
		Info struct{ Description string } `json:"info"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return doc.Info.Description, nil
}

// Block returns the first fenced block opened by fence (such as "```sh") after the line
// heading in text, without its fences.
func Block(text, heading, fence string) (string, error) {
	_, rest, ok := strings.Cut("\n"+text, "\n"+heading+"\n")
	if !ok {
		return "", fmt.Errorf("no heading %q", heading)
	}
	_, rest, ok = strings.Cut("\n"+rest, "\n"+fence+"\n")
	if !ok {
		return "", fmt.Errorf("no %s block after %q", fence, heading)
	}
	block, _, _ := strings.Cut(rest, "\n```")
	return block, nil
}

var span = regexp.MustCompile("`[^`\n]+`")

// Code returns the code of Markdown text: each line of its fenced blocks, without a shell
// comment, and each inline code span outside them, without its backquotes.
func Code(text string) []string {
	var code []string
	for line, inBlock := range markdownLines(text) {
		if inBlock {
			if i := strings.Index(line, "#"); i >= 0 && (i == 0 || line[i-1] == ' ') {
				line = line[:i]
			}
			code = append(code, line)
			continue
		}
		for _, s := range span.FindAllString(line, -1) {
			code = append(code, strings.Trim(s, "`"))
		}
	}
	return code
}

// markdownLines yields the lines of Markdown text but the fences of its code blocks, each with
// whether it is inside one.
func markdownLines(text string) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		inBlock := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			if !yield(line, inBlock) {
				return
			}
		}
	}
}
