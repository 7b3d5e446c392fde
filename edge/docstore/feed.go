package docstore

import (
	"cmp"
	"slices"
	"sort"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// Feed is one RPDE feed of a snapshot (D35): every course or class document it serves and
// every tombstone it carries, by change number. It holds no document: an item's data is
// the document its id has in the snapshot's index, which the single read serves, so the
// feeds cost 16 bytes per item and not a copy of the catalogue.
type Feed struct {
	items []feedItem // by modified, ascending
	docs  *idIndex   // the snapshot's index of the feed's kind
}

// feedItem is one course or class: served (its id is in the index) or deleted.
type feedItem struct {
	modified int64
	id       int64
}

// Item is one item of a page: Doc is nil for a deleted course or class.
type Item struct {
	Modified int64
	ID       int64
	Doc      *Document
}

// Len is the number of items of the feed.
func (f *Feed) Len() int { return len(f.items) }

// Page returns up to limit items of f whose change number is greater than after, in
// order, appended to dst: in time proportional to the page, a binary search and limit
// index reads.
func (f *Feed) Page(dst []Item, after int64, limit int) []Item {
	return f.PageAt(dst, f.Start(after), limit)
}

// Start is the position in f of the first item whose change number is greater than after
// (Len when there is none): a page is known by where it starts.
func (f *Feed) Start(after int64) int {
	return sort.Search(len(f.items), func(i int) bool { return f.items[i].modified > after })
}

// PageAt returns up to limit items of f from position start on, appended to dst.
func (f *Feed) PageAt(dst []Item, start, limit int) []Item {
	for _, it := range f.items[start:min(len(f.items), start+limit)] {
		dst = append(dst, Item{Modified: it.modified, ID: it.id, Doc: f.docs.get(it.id)})
	}
	return dst
}

// Courses is the snapshot's feed of courses.
func (s *Snapshot) Courses() *Feed { return &Feed{items: s.feeds[0], docs: &s.courses} }

// Classes is the snapshot's feed of classes.
func (s *Snapshot) Classes() *Feed { return &Feed{items: s.feeds[1], docs: &s.classes} }

// feedOf is the index into Snapshot.feeds of a snapshot.FeedRoute kind.
func feedOf(kind string) int {
	if kind == snapshot.KindCourse {
		return 0
	}
	return 1
}

// newFeeds returns the feeds of m: its course and class documents that have a change
// number (a manifest written before the feeds has none) and its tombstones.
func newFeeds(m *snapshot.Manifest) [2][]feedItem {
	var feeds [2][]feedItem
	for route, e := range m.Documents {
		if kind, id, ok := snapshot.FeedRoute(route); ok && e.Modified > 0 {
			feeds[feedOf(kind)] = append(feeds[feedOf(kind)], feedItem{e.Modified, id})
		}
	}
	feeds = withTombstones(feeds, m.Feed)
	for i := range feeds {
		slices.SortFunc(feeds[i], byModified)
	}
	return feeds
}

// withTombstones appends the tombstones of feed to feeds.
func withTombstones(feeds [2][]feedItem, feed *snapshot.Feed) [2][]feedItem {
	if feed == nil {
		return feeds
	}
	for _, t := range feed.Tombstones {
		if kind, id, ok := snapshot.FeedRoute(t.Route); ok && t.Modified > 0 {
			feeds[feedOf(kind)] = append(feeds[feedOf(kind)], feedItem{t.Modified, id})
		}
	}
	return feeds
}

func byModified(a, b feedItem) int { return cmp.Compare(a.modified, b.modified) }

// patchFeeds returns the feeds of s with the changes of d: the items of the ids d
// re-numbers (a document whose content changed, one added, one removed) and every
// tombstone dropped, d's documents and tombstones added. It costs a pass over the feeds,
// no sort of them: what is kept is in order, and only what d adds is sorted, then merged.
func (s *Snapshot) patchFeeds(d *snapshot.Delta, changes []routeChange) [2][]feedItem {
	var add [2][]feedItem
	touched := [2]map[int64]bool{{}, {}}
	for _, c := range changes {
		kind, id, ok := snapshot.FeedRoute(c.route)
		if !ok {
			continue
		}
		touched[feedOf(kind)][id] = true
		if e := d.Documents[c.route]; !c.remove && e.Modified > 0 {
			add[feedOf(kind)] = append(add[feedOf(kind)], feedItem{e.Modified, id})
		}
	}
	add = withTombstones(add, d.Feed)
	indexes := [2]*idIndex{&s.courses, &s.classes}
	var out [2][]feedItem
	for i := range out {
		slices.SortFunc(add[i], byModified)
		kept := make([]feedItem, 0, len(s.feeds[i])+len(add[i]))
		for _, it := range s.feeds[i] {
			// A tombstone is an id s does not serve: d's list of them replaces s's.
			if !touched[i][it.id] && indexes[i].get(it.id) != nil {
				kept = append(kept, it)
			}
		}
		out[i] = merge(kept, add[i])
	}
	return out
}

// merge returns the items of a and b, each in order, in order, in a's memory when it has
// room.
func merge(a, b []feedItem) []feedItem {
	n := len(a)
	a = append(a, b...)
	if n == 0 || len(b) == 0 || a[n-1].modified < a[n].modified {
		return a
	}
	// From the end: a's tail moves right into the room b's items leave.
	i, j, k := n-1, len(b)-1, len(a)-1
	for j >= 0 {
		if i >= 0 && a[i].modified > b[j].modified {
			a[k] = a[i]
			i--
		} else {
			a[k] = b[j]
			j--
		}
		k--
	}
	return a
}

// modified returns the change number of every course and class document s serves, by
// route, for its manifest.
func (s *Snapshot) modified() map[string]int64 {
	m := make(map[string]int64, len(s.feeds[0])+len(s.feeds[1]))
	for _, it := range s.feeds[0] {
		if s.courses.get(it.id) != nil {
			m[snapshot.CourseRoute(it.id)] = it.modified
		}
	}
	for _, it := range s.feeds[1] {
		if s.classes.get(it.id) != nil {
			m[snapshot.ClassRoute(it.id)] = it.modified
		}
	}
	return m
}
