package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// badIDs finds the ids a build scans as integers that are NULL: a course's and a class's
// id, and a class's course_id (classes.sql, search_index.sql, changes_classes.sql). One
// fails the build ("cannot scan NULL into *int64") or the edge's search index, or a later
// build on a change, which reads classes public or not. Every row is checked, not only the
// public ones, as the uniqueness of ids is: a row turns public without the mapping
// changing. A registration's class_id and a room's id are only joined on, never scanned, so
// a NULL there takes no seat and assigns no room. Each row of the query is a problem, with
// how many rows have it.
const badIDs = `
SELECT rel, what, n FROM (
  SELECT 1, 'catalogue_courses', 'courses with a NULL id', count(*) FROM catalogue_courses WHERE id IS NULL
  UNION ALL
  SELECT 2, 'catalogue_classes', 'classes with a NULL id', count(*) FROM catalogue_classes WHERE id IS NULL
  UNION ALL
  SELECT 3, 'catalogue_classes', 'classes with a NULL course_id', count(*) FROM catalogue_classes WHERE course_id IS NULL
) AS p(ord, rel, what, n)
WHERE n > 0 ORDER BY ord`

// checkIDs checks that every id a build publishes can be read (badIDs).
func checkIDs(ctx context.Context, conn *pgx.Conn) Check {
	c := Check{Name: "ids"}
	bad, err := lines(ctx, conn, func(r pgx.CollectableRow) (string, error) {
		var rel, what string
		var n int64
		err := r.Scan(&rel, &what, &n)
		return fmt.Sprintf("%s: %d %s", rel, n, what), err
	}, badIDs)
	if err != nil {
		c.Detail = "cannot read the mapping: " + err.Error()
		c.Fix = "fix the mapping (see the columns above), then run builder doctor again"
		return c
	}
	if len(bad) > 0 {
		c.Detail = strings.Join(bad, "; ") + ": a build would fail on them"
		c.Fix = "in the mapping, give every course and class an id and every class its course_id: map the table's key " +
			"(and the class's course key), or leave the rows without one out of the view (WHERE id IS NOT NULL)"
		return c
	}
	c.OK, c.Detail = true, "every course and class has an id, and every class a course_id"
	return c
}
