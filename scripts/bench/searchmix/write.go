package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// maxScripts is how many scripts the mix is spread over: pgbench takes at most 128.
const maxScripts = 100

// write writes the mix into dir: paths.txt, the pgbench scripts and pgbench.args (see the
// package comment). Search i goes into script i % maxScripts, which picks one of its
// searches at random with \if; its weight is its number of searches.
func write(dir, base, searchSQL string, today time.Time, cases []search) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	body, nparams, err := scriptBody(searchSQL)
	if err != nil {
		return err
	}
	scripts := make([][]string, min(len(cases), maxScripts))
	var paths, defs []string
	for i, s := range cases {
		paths = append(paths, s.path(base))
		args := s.sqlArgs(today)
		if len(args) != nparams {
			return fmt.Errorf("templates/search.sql takes %d arguments but the mix passes %d: update sqlArgs in scripts/bench/searchmix", nparams, len(args))
		}
		query, d := pgbenchScript(body, fmt.Sprintf("c%d_", i+1), args)
		scripts[i%len(scripts)] = append(scripts[i%len(scripts)], query)
		defs = append(defs, d...)
	}
	var pgArgs []string
	for i, queries := range scripts {
		file := filepath.Join(dir, fmt.Sprintf("script-%03d.sql", i+1))
		if err := os.WriteFile(file, []byte(chooseOne(queries)), 0o644); err != nil {
			return fmt.Errorf("write pgbench script: %w", err)
		}
		pgArgs = append(pgArgs, "-f", fmt.Sprintf("%s@%d", file, len(queries)))
	}
	for _, d := range defs {
		pgArgs = append(pgArgs, "-D", d)
	}
	files := map[string][]string{"paths.txt": paths, "pgbench.args": pgArgs}
	for name, lines := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	fmt.Printf("searchmix: %d searches written to %s in %d pgbench scripts\n", len(cases), dir, len(scripts))
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
