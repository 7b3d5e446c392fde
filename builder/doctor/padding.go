package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// paddedColumns lists the character (char(n), bpchar) columns of the catalogue_* views with
// their width, NULL for one of no declared width (COALESCE of a char(n) and a literal). A
// char(n) value comes padded with blanks to n, and the builder publishes what it reads
// ("Online              " is none of the course types), although type::text, as the course
// types check reads it, drops them. The type itself is not refused (builds would stop for a
// char(2) country that is never padded): its values are.
const paddedColumns = `
SELECT c.table_name, c.column_name, c.character_maximum_length
FROM information_schema.columns c
WHERE c.table_schema = current_schema() AND c.table_name LIKE 'catalogue\_%'
  AND c.data_type = 'character'
ORDER BY 1, 2`

// checkPadding fails a character column of a view holding a value with trailing blanks:
// the builder would publish them.
func checkPadding(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "padded values"}
	rows, _ := conn.Query(ctx, paddedColumns)
	type column struct {
		View, Name string
		Width      *int // nil: no declared width, whose values keep the padding of their source
	}
	cols, err := pgx.CollectRows(rows, pgx.RowToStructByPos[column])
	var bad []string
	for _, col := range cols {
		if err != nil {
			break
		}
		var n int64
		if n, err = countPadded(ctx, conn, col.View, col.Name); err == nil && n > 0 {
			bad = append(bad, paddedDetail(col.View, col.Name, col.Width, n))
		}
	}
	switch {
	case err != nil:
		return unreadable(c, err)
	case len(bad) > 0:
		c.Detail = strings.Join(bad, "; ") + ": a char(n) value is padded with blanks to n characters, which would be published"
		c.Fix = "map each as col::text (or rtrim(col)) in its view, which drops the blanks"
	default:
		c.OK, c.Detail = true, fmt.Sprintf("%d char(n) columns, none holding a value shorter than n", len(cols))
	}
	return c
}

// countPadded counts the values of view.name that end in blanks. It compares the value's
// bytes with its text's, which drops them: char_length and comparisons of a character value
// ignore them, and a column of no declared width has no n to compare with.
func countPadded(ctx context.Context, conn *pgx.Conn, view, name string) (int64, error) {
	col := pgx.Identifier{name}.Sanitize()
	q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE octet_length(%s) > octet_length(%s::text)`,
		pgx.Identifier{view}.Sanitize(), col, col)
	var n int64
	err := conn.QueryRow(ctx, q).Scan(&n)
	return n, err
}

// paddedDetail says how many values of view.name are padded, by its width where it has one.
func paddedDetail(view, name string, width *int, n int64) string {
	if width == nil {
		return fmt.Sprintf("%s.%s: %d values padded with blanks (a character column of no declared width)", view, name, n)
	}
	return fmt.Sprintf("%s.%s: %d values shorter than char(%d)", view, name, n, *width)
}
