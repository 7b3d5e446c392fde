package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxScripts is how many scripts a mix is spread over: pgbench takes at most 128.
const maxScripts = 100

// statement is one query of a pgbench script: a template and its arguments, nil for NULL.
// inline writes the arguments into the text (see pgbenchScript).
type statement struct {
	template, sql string
	args          []any
	inline        bool
}

// write writes the mix into dir: paths.txt, and for each named list of statements (one per
// search, in the order of cases) its pgbench scripts NAME-NNN.sql and NAME.args (see the
// package comment).
func write(dir, base string, cases []search, mixes map[string][]statement) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	var paths []string
	for _, s := range cases {
		paths = append(paths, s.path(base))
	}
	if err := writeLines(filepath.Join(dir, "paths.txt"), paths); err != nil {
		return err
	}
	for name, stmts := range mixes {
		if err := writeScripts(dir, name, stmts); err != nil {
			return err
		}
	}
	fmt.Printf("searchmix: %d searches written to %s\n", len(cases), dir)
	return nil
}

// writeScripts writes the pgbench scripts of stmts and their arguments, NAME.args. Statement
// i goes into script i % maxScripts, which picks one of its statements at random with \if;
// its weight is its number of statements.
func writeScripts(dir, name string, stmts []statement) error {
	scripts := make([][]string, min(len(stmts), maxScripts))
	var defs []string
	for i, st := range stmts {
		body, nparams, err := scriptBody(st.sql)
		if err != nil {
			return fmt.Errorf("%s: %w", st.template, err)
		}
		if len(st.args) != nparams {
			return fmt.Errorf("%s takes %d arguments but the mix passes %d: update scripts/bench/searchmix", st.template, nparams, len(st.args))
		}
		query, d := pgbenchScript(body, fmt.Sprintf("c%d_", i+1), st.args, st.inline)
		scripts[i%len(scripts)] = append(scripts[i%len(scripts)], query)
		defs = append(defs, d...)
	}
	var args []string
	for i, queries := range scripts {
		file := filepath.Join(dir, fmt.Sprintf("%s-%03d.sql", name, i+1))
		if err := os.WriteFile(file, []byte(chooseOne(queries)), 0o644); err != nil {
			return fmt.Errorf("write pgbench script: %w", err)
		}
		args = append(args, "-f", fmt.Sprintf("%s@%d", file, len(queries)))
	}
	for _, d := range defs {
		args = append(args, "-D", d)
	}
	return writeLines(filepath.Join(dir, name+".args"), args)
}

func writeLines(file string, lines []string) error {
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// chooseOne returns a pgbench script that runs one of queries, chosen at random.
func chooseOne(queries []string) string {
	if len(queries) == 1 {
		return queries[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\\set k random(1, %d)\n", len(queries))
	for i, q := range queries {
		if i == 0 {
			b.WriteString("\\if :k = 1\n")
		} else {
			fmt.Fprintf(&b, "\\elif :k = %d\n", i+1)
		}
		b.WriteString(q)
	}
	b.WriteString("\\endif\n")
	return b.String()
}
