package doctor

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// hiddenByFilter finds the rows whose visibility the live search's total reads otherwise
// than its pages. With neither a name nor a course id (search.sql), the total counts every
// public class of the dates and subtracts those of courses that are NOT is_public, while a
// page lists only classes joined to a course that is is_public. So a public class is
// counted but never listed when its course_id has no row in catalogue_courses (a courses
// view that filters, WHERE deleted_at IS NULL, leaves its classes behind) or its course's
// is_public is NULL (NOT NULL is not true): the last pages come back empty ("data": [],
// "total": 6, "last_page": 3 for 3 classes). The edge's own index (search_index.sql) counts
// them right, but the edge falls back to search.sql whenever it has no current index, and
// always with edge.search_index off. A class whose is_public is NULL is not among them:
// every query reads it as not public, its count and its pages alike. Every row is checked,
// not only public ones, as a class turns public without the mapping changing.
const hiddenByFilter = `
SELECT rel, what, n, first FROM (
  SELECT 1, 'catalogue_courses', 'courses whose is_public is NULL', count(*), min(id)
  FROM catalogue_courses WHERE is_public IS NULL
  UNION ALL
  SELECT 2, 'catalogue_classes', 'classes whose course_id is no row of catalogue_courses', count(*), min(cl.id)
  FROM catalogue_classes cl
  WHERE cl.course_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM catalogue_courses co WHERE co.id = cl.course_id)
) AS p(ord, rel, what, n, first)
WHERE n > 0 ORDER BY ord`

// checkVisibility checks that the search's total counts the classes its pages list
// (hiddenByFilter).
func checkVisibility(ctx context.Context, conn *pgx.Conn) Check {
	return rowsCheck{name: "visibility", query: hiddenByFilter,
		why: ": the class search counts their public classes in its total but lists none of them " +
			"(search.sql), so its last pages come back empty",
		fix: "in the mapping, leave out of catalogue_classes the classes of courses catalogue_courses leaves out " +
			"(WHERE EXISTS (SELECT 1 FROM catalogue_courses co WHERE co.id = course_id), or the courses view's own condition on the course), " +
			"and make is_public never NULL (COALESCE(condition, FALSE))",
		ok: "every class has its course in catalogue_courses, and every course's is_public is TRUE or FALSE",
	}.run(ctx, conn)
}
