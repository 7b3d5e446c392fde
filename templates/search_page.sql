-- search_page.sql: what the class search reads live of one page's classes (spec 4.3, 4.4;
-- D6, D29), the page found by the edge in its index (edge/search/index), and the version of
-- the data the search matches on (catalogue_search_version) as this statement sees it. The
-- edge uses the page only when that version is the index's: then the index held exactly
-- this snapshot's data, so the page and its total are the ones search.sql would give, and
-- the index's course names, types and dates are this snapshot's too. Returns:
--   version, then for each class of $1 in the order given (none when the version is not
--   $2; one row of NULLs beside the version for an empty page):
--   id, cost, city, state (of the class's room; NULL without a room: the edge leaves them
--   out for Online courses), available_seats (seat limit minus registrations, never below
--   0; NULL when uncapped).
-- Arguments: $1 the page's class ids (bigint[]), $2 the index's version.
-- A class that is not public is left out even then: the version says the index is current,
-- and this keeps a wrong version from showing what is hidden.
-- A plain query on keys: the edge runs it as a prepared statement with a generic plan.
SELECT
    v.version,
    pg.id,
    pg.cost,
    pg.city,
    pg.state,
    pg.available_seats
FROM catalogue_search_version v
LEFT JOIN LATERAL (
    SELECT
        p.ord,
        cl.id,
        cl.cost,
        loc.city,
        loc.state,
        CASE WHEN cl.seat_limit IS NOT NULL THEN GREATEST(cl.seat_limit - (
            SELECT COUNT(*) FROM catalogue_registrations rg WHERE rg.class_id = cl.id
        ), 0) END AS available_seats
    FROM unnest($1::bigint[]) WITH ORDINALITY AS p (id, ord)
    JOIN catalogue_classes cl ON cl.id = p.id
    LEFT JOIN catalogue_rooms loc ON loc.id = cl.room_id
    WHERE v.version = $2::bigint AND cl.is_public
    -- OFFSET 0 keeps the subquery whole, so that a version other than $2 stops it before it
    -- reads anything.
    OFFSET 0
) pg ON TRUE
ORDER BY pg.ord
