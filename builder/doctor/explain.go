package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// explain reads into plan the JSON of EXPLAIN (VERBOSE) query, planned with no index scan:
// a partial index implies its predicate, and a plan scanning one writes no condition the
// index implies, so a column a view filters on (deleted_at IS NULL, status <> 'cancelled')
// would go unseen. The settings last for a transaction rolled back: nothing is written.
func explain(ctx context.Context, conn *pgx.Conn, query string, plan any) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	if _, err := tx.Exec(ctx, `SELECT set_config(s, 'off', true)
		FROM unnest('{enable_indexscan,enable_indexonlyscan,enable_bitmapscan,enable_tidscan}'::text[]) AS s`); err != nil {
		return err
	}
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (VERBOSE, FORMAT JSON) "+query).Scan(&raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, plan); err != nil {
		return fmt.Errorf("read the plan: %w", err)
	}
	return nil
}

// columnsIn returns the schemas, tables and columns that exprs, written by EXPLAIN VERBOSE,
// read of tables (by alias), as three lists of the same length.
func columnsIn(exprs []string, tables map[string][2]string) [3][]string {
	var out [3][]string
	for _, e := range exprs {
		for _, m := range qualified.FindAllStringSubmatch(e, -1) {
			if t, ok := tables[unquote(m[1])]; ok {
				out[0], out[1], out[2] = append(out[0], t[0]), append(out[1], t[1]), append(out[2], unquote(m[2]))
			}
		}
	}
	return out
}

// terms returns what cond, a condition as EXPLAIN VERBOSE writes it, compares of the table
// aliased alias, without the alias: of each of its top-level ANDs, the operands of its
// comparison that read the table ("classes.start_date >= '2027-01-01'::date" is
// start_date), or the whole of one that compares nothing (NOT is_public, an OR). These are
// what an index's keys would be, expressions as they are (an index on start_date serves
// no condition on (start_date AT TIME ZONE ...)::date).
func terms(cond, alias string) []string {
	var out []string
	for _, c := range topLevel(unwrap(cond), " AND ") {
		words := topLevel(unwrap(c), " ")
		at := slices.IndexFunc(words, isOperator)
		parts := []string{strings.Join(words, " ")}
		if at > 0 {
			parts = []string{strings.Join(words[:at], " "), strings.Join(words[at+1:], " ")}
		}
		for _, p := range parts {
			if t, ok := unqualify(p, alias); ok && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// isOperator says whether w, a word of a condition, is a comparison's operator: EXPLAIN
// writes every operator's operands in parentheses, so the first one at the top is it.
func isOperator(w string) bool {
	return w == "IS" || w != "" && strings.Trim(w, "=<>!~*@&|#%^+-/?") == ""
}

// topLevel splits s at each sep outside parentheses and quotes.
func topLevel(s, sep string) []string {
	var out []string
	depth, quote, from := 0, byte(0), 0
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			out = append(out, s[from:i])
			from = i + len(sep)
			i = from - 1
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '(':
			depth++
		case ch == ')':
			depth--
		}
	}
	return append(out, s[from:])
}

// unwrap removes the parentheses around the whole of s: those of "(a = 1)", not of
// "(a = 1) OR (b = 2)", whose inside splits at a top-level ")".
func unwrap(s string) string {
	for strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") && len(topLevel(s[1:len(s)-1], ")")) == 1 {
		s = s[1 : len(s)-1]
	}
	return s
}

// unqualify returns s without the alias before the columns of alias it reads, and whether
// it reads any. Quoted literals are left as they are.
func unqualify(s, alias string) (string, bool) {
	var b strings.Builder
	found := false
	for i, part := range strings.Split(s, "'") {
		if i%2 == 0 { // outside a literal ('' inside one splits it in two, both inside)
			part = qualified.ReplaceAllStringFunc(part, func(m string) string {
				sub := qualified.FindStringSubmatch(m)
				if unquote(sub[1]) != alias {
					return m
				}
				found = true
				return sub[2]
			})
		}
		if i > 0 {
			b.WriteByte('\'')
		}
		b.WriteString(part)
	}
	return b.String(), found
}
