package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// paddedColumns lists the char(n) (character) columns of the catalogue_* views with their
// width. A char(n) value comes padded with blanks to n, and the builder publishes what it
// reads ("Online              " is none of the course types), although type::text, as the
// course types check reads it, drops them. The type itself is not refused (builds would stop
// for a char(2) country that is never padded): its values are.
const paddedColumns = `
SELECT c.table_name, c.column_name, c.character_maximum_length
FROM information_schema.columns c
WHERE c.table_schema = current_schema() AND c.table_name LIKE 'catalogue\_%'
  AND c.data_type = 'character'
ORDER BY 1, 2`

// checkPadding fails a char(n) column of a view holding a value shorter than n: the builder
// would publish its padding.
func checkPadding(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "padded values"}
	rows, _ := conn.Query(ctx, paddedColumns)
	type column struct {
		View, Name string
		Width      int
	}
	cols, err := pgx.CollectRows(rows, pgx.RowToStructByPos[column])
	var bad []string
	for _, col := range cols {
		if err != nil {
			break
		}
		var n int64
		q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE char_length(%s::text) < $1`,
			pgx.Identifier{col.View}.Sanitize(), pgx.Identifier{col.Name}.Sanitize())
		if err = conn.QueryRow(ctx, q, col.Width).Scan(&n); err == nil && n > 0 {
			bad = append(bad, fmt.Sprintf("%s.%s: %d values shorter than char(%d)", col.View, col.Name, n, col.Width))
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
