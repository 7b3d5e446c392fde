package doctor

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// badIDs finds the ids of courses and classes a build cannot publish as the contract needs
// them. Each row of the query is a problem, with how many rows have it and the smallest id
// among them (NULL for NULL ids). Every row is checked, not only the public ones, as the
// uniqueness of ids is: a row turns public without the mapping changing.
//
//   - NULL: a build scans a course's and a class's id and a class's course_id as integers
//     (classes.sql, search_index.sql, and changes_classes.sql, which reads classes public or
//     not), and fails on one ("cannot scan NULL into *int64"). A registration's class_id and
//     a room's id are only joined on, never scanned: a NULL there takes no seat and assigns
//     no room.
//   - Below 1: path ids are positive integers (D15), so such a course or class is listed and
//     searched but its single read answers 404, and it never enters the feeds (snapshot.FeedRoute
//     takes no such route).
//   - Above 2^53-1: ids are JSON integers outside the search (public-catalogue-api.md 2.1,
//     2.2), and JavaScript reads none larger exactly (D52, as D35 bounds the feeds' change
//     numbers).
const badIDs = `
SELECT rel, what, n, first FROM (
  SELECT 1, 'catalogue_courses', 'courses with a NULL id, on which a build fails', count(*), NULL::bigint
  FROM catalogue_courses WHERE id IS NULL
  UNION ALL
  SELECT 2, 'catalogue_classes', 'classes with a NULL id, on which a build fails', count(*), NULL
  FROM catalogue_classes WHERE id IS NULL
  UNION ALL
  SELECT 3, 'catalogue_classes', 'classes with a NULL course_id, on which a build fails', count(*), NULL
  FROM catalogue_classes WHERE course_id IS NULL
  UNION ALL
  SELECT 4, 'catalogue_courses', 'courses with an id below 1, whose single read is 404 (D15)', count(*), min(id)
  FROM catalogue_courses WHERE id < 1
  UNION ALL
  SELECT 5, 'catalogue_classes', 'classes with an id below 1, whose single read is 404 (D15)', count(*), min(id)
  FROM catalogue_classes WHERE id < 1
  UNION ALL
  SELECT 6, 'catalogue_courses', 'courses with an id above 2^53-1, which JavaScript reads inexactly', count(*), min(id)
  FROM catalogue_courses WHERE id > 9007199254740991
  UNION ALL
  SELECT 7, 'catalogue_classes', 'classes with an id above 2^53-1, which JavaScript reads inexactly', count(*), min(id)
  FROM catalogue_classes WHERE id > 9007199254740991
) AS p(ord, rel, what, n, first)
WHERE n > 0 ORDER BY ord`

// checkIDs checks that every id of a course or class can be published (badIDs).
func checkIDs(ctx context.Context, conn *pgx.Conn) Check {
	return rowsCheck{name: "ids", query: badIDs,
		fix: "in the mapping, give every course and class an id from 1 to 9007199254740991 (2^53-1) and every class its course_id: " +
			"map a key of the table that is one (a bigint identity column, added if the table has none), " +
			"or leave the other rows out of the view (WHERE id BETWEEN 1 AND 9007199254740991 AND course_id IS NOT NULL)",
		ok: "every course and class has an id from 1 to 2^53-1, and every class a course_id",
	}.run(ctx, conn)
}
