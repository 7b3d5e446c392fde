package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxScripts is how many scripts a mix is spread over: pgbench takes at most 128.
const maxScripts = 100

// statement is one query of a pgbench script: a template and its arguments, nil for NULL,
// and how the script passes them (see pgbenchScript and gsetScript).
type statement struct {
	template, sql string
	args          []any
	pass          passing
}

type passing int

const (
	variables passing = iota // -D variables, one set per statement; NULL in the text
	inline                   // the values in the text
	gset                     // one statement for all of a template's searches (no NULL)
)

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

// writeScripts writes the pgbench scripts of stmts and their arguments, NAME.args: the
// statements of each kind are spread over scripts (statement i of a kind into script
// i % n), each picking one of its statements at random with \if; a script's weight is its
// number of statements. gset statements of a template share a script's one query
// (gsetScript); the others each have their own (pgbenchScript). Scripts are many and short,
// as pgbench steps through every \elif before the branch it takes: a chain of a thousand
// cost more than the query (449 against 1,478 searches a second through the edge).
func writeScripts(dir, name string, stmts []statement) error {
	kinds := map[string][]statement{}
	for _, st := range stmts {
		kind := "own"
		if st.pass == gset {
			kind = "gset " + st.template
		}
		kinds[kind] = append(kinds[kind], st)
	}
	var scripts []string
	var weights []int
	var defs []string
	written := 0 // statements written so far: their variables are named after it
	for kind, group := range kinds {
		n := max(1, min(len(group), maxScripts*len(group)/len(stmts)))
		spread := make([][]statement, n)
		for i, st := range group {
			spread[i%n] = append(spread[i%n], st)
		}
		for _, part := range spread {
			script, d, err := writeScript(kind != "own", part, written)
			if err != nil {
				return err
			}
			scripts, weights, defs = append(scripts, script), append(weights, len(part)), append(defs, d...)
			written += len(part)
		}
	}
	var args []string
	for i, script := range scripts {
		file := filepath.Join(dir, fmt.Sprintf("%s-%03d.sql", name, i+1))
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			return fmt.Errorf("write pgbench script: %w", err)
		}
		args = append(args, "-f", fmt.Sprintf("%s@%d", file, weights[i]))
	}
	for _, d := range defs {
		args = append(args, "-D", d)
	}
	return writeLines(filepath.Join(dir, name+".args"), args)
}

// writeScript returns the script of stmts (gsetScript when shared, else one query each
// picked with \if) and the -D definitions of its variables, named after first + their
// position.
func writeScript(shared bool, stmts []statement, first int) (string, []string, error) {
	if shared {
		script, err := gsetScript(stmts)
		return script, nil, err
	}
	var queries, defs []string
	for i, st := range stmts {
		body, err := checkedBody(st)
		if err != nil {
			return "", nil, err
		}
		query, d := pgbenchScript(body, fmt.Sprintf("c%d_", first+i+1), st.args, st.pass == inline)
		queries, defs = append(queries, query), append(defs, d...)
	}
	return chooseOne(queries), defs, nil
}

// checkedBody is st's template as a pgbench command, checked against st's arguments.
func checkedBody(st statement) (string, error) {
	body, nparams, err := scriptBody(st.sql)
	if err != nil {
		return "", fmt.Errorf("%s: %w", st.template, err)
	}
	if len(st.args) != nparams {
		return "", fmt.Errorf("%s takes %d arguments but the mix passes %d: update scripts/bench/searchmix", st.template, nparams, len(st.args))
	}
	return body, nil
}

// gsetScript returns the script of stmts, statements of one template: it picks one of them
// at random with \if, whose branch sets the variables a1, a2... to its arguments with a
// query of constants (\gset), and then runs the template once with them. A client thus
// prepares and plans the template once, as the edge does, at the cost of one small query
// per transaction.
func gsetScript(stmts []statement) (string, error) {
	body, err := checkedBody(stmts[0])
	if err != nil {
		return "", err
	}
	var branches []string
	for _, st := range stmts {
		var cols []string
		for i, a := range st.args {
			if a == nil {
				return "", fmt.Errorf("%s: a NULL argument cannot be passed with \\gset", st.template)
			}
			cols = append(cols, fmt.Sprintf("'%s' AS a%d", strings.ReplaceAll(argText(a), "'", "''"), i+1))
		}
		branches = append(branches, "SELECT "+strings.Join(cols, ", ")+" \\gset\n")
	}
	query := paramRe.ReplaceAllString(body, ":a$1")
	return chooseOne(branches) + query, nil
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
