package docstore

import "slices"

// idIndex finds the document of a course or class id. The ids are the database's serial
// numbers, dense from 1, so most are found by position: ids below denseLen are in pages of
// idPageSize documents, two reads where a map lookup reads its control word and its slot
// at random places in several megabytes. Ids from twice the number of ids on (a sparse or
// very large id) are in a small map, so that no id makes the pages many.
//
// An index is immutable once its snapshot is served, and a snapshot built over another
// shares every page its change does not touch (with): a change of a few documents copies
// a few pages of 7 KB and the page table (8 bytes per 128 ids), not the index. The pages
// hold the documents themselves rather than positions in a list of them, so that nothing
// else has to be copied or renumbered.
//
// newIDIndex puts its pages in one array: a page alone is an allocation of 8 KB (the
// size class above 7 KB), which would add a seventh to the index. A page a change copies
// is allocated alone, and the array stays as long as any of its pages is used, so once a
// quarter of the pages are copies (copied) the index is made anew.
type idIndex struct {
	pages    []*idPage           // the documents of ids [i*idPageSize, (i+1)*idPageSize); nil: none
	denseLen int64               // ids below it are in pages, the others in sparse
	sparse   map[int64]*Document // the ids from denseLen on
	n        int                 // ids in the index
	copied   int                 // pages allocated alone, not in newIDIndex's array
}

// idPageSize is the number of ids a page holds: 7 KB of documents, few enough that a
// change copies little, many enough that the page table stays small.
const (
	idPageBits = 7
	idPageSize = 1 << idPageBits
)

// idPage holds the documents of idPageSize consecutive ids; a document without a chunk is
// none.
type idPage [idPageSize]Document

// idDoc is one entry of an idIndex, or the removal of one (doc nil) in a change.
type idDoc struct {
	id  int64
	doc *Document
}

// denseSlack bounds the ids kept in pages: those below twice the number of ids plus this,
// so that the pages hold at most two slots per id (and a page) however sparse the ids.
const denseSlack = 64

// newIDIndex indexes entries, whose ids are distinct and positive.
func newIDIndex(entries []idDoc) idIndex {
	limit := int64(2*len(entries) + denseSlack)
	top := int64(0) // the largest id below limit
	for _, e := range entries {
		if e.id < limit {
			top = max(top, e.id)
		}
	}
	x := idIndex{sparse: map[int64]*Document{}, denseLen: top + 1, n: len(entries)}
	x.pages = make([]*idPage, pageOf(top)+1)
	used := make([]bool, len(x.pages)) // the pages that hold an id
	n := 0
	for _, e := range entries {
		if i := pageOf(e.id); e.id <= top && !used[i] {
			used[i] = true
			n++
		}
	}
	array := make([]idPage, n)
	for i := range x.pages {
		if used[i] {
			x.pages[i], array = &array[0], array[1:]
		}
	}
	x.set(entries, nil)
	return x
}

func pageOf(id int64) int64 { return id >> idPageBits }

// get returns the document of id, or nil.
func (x *idIndex) get(id int64) *Document {
	if uint64(id) >= uint64(x.denseLen) {
		return x.sparse[id]
	}
	p := x.pages[pageOf(id)]
	if p == nil {
		return nil
	}
	if d := &p[id&(idPageSize-1)]; d.chunk != nil {
		return d
	}
	return nil
}

// each calls f for every id in the index and its document, in the order of the ids below
// denseLen, then the others in no order.
func (x *idIndex) each(f func(id int64, d *Document)) {
	for i, p := range x.pages {
		if p == nil {
			continue
		}
		for j := range p {
			if p[j].chunk != nil {
				f(int64(i)<<idPageBits+int64(j), &p[j])
			}
		}
	}
	for id, d := range x.sparse {
		f(id, d)
	}
}

// with returns the index x with changes made: each entry's document added or replaced, or
// its id removed when doc is nil (an id x lacks is ignored). x is not modified: the result
// shares with x every page the changes do not touch, and the map when they do not touch
// it. When removals have left the pages holding more than two slots per id, or a quarter
// of its pages are copies (see idIndex), the result is indexed anew.
func (x *idIndex) with(changes []idDoc) idIndex {
	if len(changes) == 0 {
		return *x
	}
	y := *x
	for _, c := range changes {
		switch had := x.get(c.id) != nil; {
		case had && c.doc == nil:
			y.n--
		case !had && c.doc != nil:
			y.n++
		}
	}
	y.denseLen = x.denseTop(changes, y.n) + 1
	y.pages = make([]*idPage, max(pageOf(y.denseLen-1)+1, int64(len(x.pages))))
	copy(y.pages, x.pages)
	var moved []idDoc
	moved, y.sparse = x.splitSparse(changes, y.denseLen)
	y.set(moved, x)
	y.set(changes, x)
	if int64(len(y.pages))*idPageSize > int64(2*y.n+denseSlack)+idPageSize || y.copied > len(y.pages)/4 {
		var all []idDoc
		y.each(func(id int64, d *Document) { all = append(all, idDoc{id, d}) })
		return newIDIndex(all)
	}
	return y
}

// denseTop returns the largest id the pages of x with changes, n ids, cover: x's, or the
// largest id below newIDIndex's limit for n ids among the changes' new ids and x's map,
// so that the ids newIDIndex would put into the pages go there as the ids grow. (An id of
// the map that the changes remove may count: the pages then cover a few ids more.)
func (x *idIndex) denseTop(changes []idDoc, n int) int64 {
	limit, top := int64(2*n+denseSlack), x.denseLen-1
	for _, c := range changes {
		if c.doc != nil && c.id > top && c.id < limit {
			top = c.id
		}
	}
	for id := range x.sparse {
		if id > top && id < limit {
			top = id
		}
	}
	return top
}

// splitSparse returns the entries of x's map below denseLen, which go into the pages, and
// the map of the others: x's own when no change is at or above denseLen and none moves,
// since x's is never modified.
func (x *idIndex) splitSparse(changes []idDoc, denseLen int64) (moved []idDoc, sparse map[int64]*Document) {
	for id, d := range x.sparse {
		if id < denseLen {
			moved = append(moved, idDoc{id, d})
		}
	}
	touchesMap := slices.ContainsFunc(changes, func(c idDoc) bool { return c.id >= denseLen })
	if !touchesMap && len(moved) == 0 {
		return nil, x.sparse
	}
	sparse = make(map[int64]*Document, len(x.sparse)-len(moved))
	for id, d := range x.sparse {
		if id >= denseLen {
			sparse[id] = d
		}
	}
	return moved, sparse
}

// set writes entries into y, whose page table and map it owns, copying first every page
// that y still shares with shared (nil: y owns every page).
func (y *idIndex) set(entries []idDoc, shared *idIndex) {
	for _, e := range entries {
		if e.id >= y.denseLen {
			if e.doc == nil {
				delete(y.sparse, e.id)
			} else {
				y.sparse[e.id] = e.doc
			}
			continue
		}
		i := pageOf(e.id)
		p := y.pages[i]
		if p != nil && shared != nil && i < int64(len(shared.pages)) && p == shared.pages[i] {
			p = new(idPage)
			*p = *shared.pages[i]
			y.pages[i] = p
			y.copied++
		}
		if p == nil {
			if e.doc == nil {
				continue
			}
			p = new(idPage)
			y.pages[i] = p
			y.copied++
		}
		if e.doc == nil {
			p[e.id&(idPageSize-1)] = Document{}
		} else {
			p[e.id&(idPageSize-1)] = *e.doc
		}
	}
}
