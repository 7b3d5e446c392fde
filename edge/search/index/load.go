package index

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
)

// Querier runs a query: a *pgxpool.Pool or a *pgx.Conn.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// letters is the argument of templates/search_index.sql: the ASCII letters whose lowering
// by the database the index learns (fold).
const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Load reads an Index with sql (templates/search_index.sql: its version, then one row per
// public course, in one statement so that both come from one snapshot).
func Load(ctx context.Context, db Querier, sql string) (*Index, error) {
	rows, err := db.Query(ctx, sql, letters)
	if err != nil {
		return nil, fmt.Errorf("read the search index: %w", err)
	}
	defer rows.Close()
	ix := newIndex()
	var r row
	for rows.Next() {
		if err := rows.Scan(&r.version, &r.id, &r.title, &r.typ, &r.name, &r.ids, &r.starts, &r.ends, &r.fold, &r.classes); err != nil {
			return nil, fmt.Errorf("read the search index: %w", err)
		}
		if err := ix.addRow(&r); err != nil {
			return nil, fmt.Errorf("read the search index: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the search index: %w", err)
	}
	if ix.version < 0 {
		return nil, fmt.Errorf("read the search index: no row, not even the version")
	}
	return ix, nil
}

// row is one row of templates/search_index.sql.
type row struct {
	version          int64
	id               *int64
	title, typ, name *string // the name, the type, the name lowered
	ids              []int64
	starts, ends     []int32
	fold             *string
	classes          *int64 // the classes of all rows: the arrays' capacity
}

func newIndex() *Index {
	matches, err := lru.New[string, []uint64](matchesKept)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &Index{version: -1, matches: matches}
}

// addRow adds one row of the query: the version, and a course unless id is NULL (the one
// row of a catalogue without public courses).
func (ix *Index) addRow(r *row) error {
	if ix.version >= 0 && r.version != ix.version {
		return fmt.Errorf("rows at versions %d and %d: the query must read one snapshot", ix.version, r.version)
	}
	if ix.version < 0 {
		ix.setFold(r.fold)
		if r.classes != nil && *r.classes > 0 && *r.classes < 1<<31 {
			n := int(*r.classes)
			ix.ids, ix.starts, ix.ends = make([]int64, 0, n), make([]int32, 0, n), make([]int32, 0, n)
		}
	}
	ix.version = r.version
	if r.id == nil {
		return nil
	}
	if r.title == nil || r.typ == nil || r.name == nil {
		return fmt.Errorf("course %d has no name or type", *r.id)
	}
	c := course{id: *r.id, title: *r.title, typ: *r.typ, name: *r.name, online: *r.typ == "Online"}
	return ix.addCourse(c, r.ids, r.starts, r.ends)
}

// addCourse appends one course and its classes; it must come after the courses before it
// (by id).
func (ix *Index) addCourse(c course, ids []int64, starts, ends []int32) error {
	switch {
	case len(ix.courses) > 0 && c.id <= ix.courses[len(ix.courses)-1].id:
		return fmt.Errorf("course %d after course %d: the rows must be in ascending id order", c.id, ix.courses[len(ix.courses)-1].id)
	case len(ids) != len(starts) || len(ids) != len(ends):
		return fmt.Errorf("course %d has %d ids, %d starts and %d ends", c.id, len(ids), len(starts), len(ends))
	}
	c.lo = int32(len(ix.ids))
	ix.ids = append(ix.ids, ids...)
	ix.starts = append(ix.starts, starts...)
	ix.ends = append(ix.ends, ends...)
	c.hi = int32(len(ix.ids))
	ix.sortClasses(c)
	ix.courses = append(ix.courses, c)
	return nil
}

// sortClasses puts c's classes in (start, id) order if the query did not.
func (ix *Index) sortClasses(c course) {
	ordered := true
	for i := c.lo + 1; i < c.hi && ordered; i++ {
		ordered = ix.before(i-1, i)
	}
	if ordered {
		return
	}
	type class struct {
		id         int64
		start, end int32
	}
	cs := make([]class, 0, c.hi-c.lo)
	for i := c.lo; i < c.hi; i++ {
		cs = append(cs, class{ix.ids[i], ix.starts[i], ix.ends[i]})
	}
	slices.SortFunc(cs, func(a, b class) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for i, x := range cs {
		ix.ids[c.lo+int32(i)], ix.starts[c.lo+int32(i)], ix.ends[c.lo+int32(i)] = x.id, x.start, x.end
	}
}

// setFold learns from fold, the database's lower() of letters, how it lowers each ASCII
// letter. The index folds names only when every letter lowers to its ASCII lower case:
// then lower() of an ASCII search is the ASCII lowering (other ASCII characters have no
// case). NULL (a database that is not UTF-8) or anything else leaves name searches to the
// database.
func (ix *Index) setFold(fold *string) {
	for c := range ix.fold {
		ix.fold[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			ix.fold[c] = byte(c) + 'a' - 'A'
		}
	}
	want := string(ix.fold['A':'Z'+1]) + string(ix.fold['a':'z'+1])
	ix.folds = fold != nil && *fold == want
}
