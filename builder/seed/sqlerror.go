package seed

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// sqlError says where in the template file a failed statement is, and what PostgreSQL said
// besides its message: the message alone (`column "prog_no" does not exist`) names neither
// the statement nor its line, and pgconn's Error leaves out the DETAIL and the HINT, which
// often say how to fix it. The error stays a *pgconn.PgError underneath.
func sqlError(file, sql string, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return fmt.Errorf("apply %s: %w", file, err)
	}
	where := file
	if pe.Position > 0 {
		line, text := lineAt(sql, int(pe.Position))
		where = fmt.Sprintf("%s, line %d (%s)", file, line, text)
	}
	var extra strings.Builder
	for _, part := range []struct{ name, text string }{{"detail", pe.Detail}, {"hint", pe.Hint}} {
		if part.text != "" {
			fmt.Fprintf(&extra, "; %s: %s", part.name, part.text)
		}
	}
	return fmt.Errorf("apply %s: %w%s", where, err, extra.String())
}

// lineAt returns the 1-based line number of the position'th character of sql (PostgreSQL
// counts characters from 1, not bytes) and that line's text, trimmed.
func lineAt(sql string, position int) (int, string) {
	line, start, n := 1, 0, 0
	for i, r := range sql {
		n++
		if n == position {
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				end = len(sql) - i
			}
			return line, strings.TrimSpace(sql[start : i+end])
		}
		if r == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, ""
}
