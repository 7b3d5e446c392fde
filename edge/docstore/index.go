package docstore

// idIndex finds the document of a course or class id. The ids are the database's serial
// numbers, dense from 1, so most are found by position in a slice: one read of 4 bytes, in
// a slice a quarter the size of a map, where a map lookup reads its control word and its
// slot at random places in several megabytes. Ids beyond twice the number of ids (a sparse
// or very large id) are in a small map, so that no id makes the slice long.
type idIndex struct {
	dense  []docPos         // the document of id i at dense[i], 0 for none
	sparse map[int64]docPos // the ids that are not in dense
	n      int              // ids in the index
}

// idPos is one entry of an idIndex.
type idPos struct {
	id  int64
	pos docPos
}

// denseSlack bounds the ids kept in the slice: those below twice the number of ids plus
// this, so that the slice costs at most 8 bytes per id, however sparse the ids.
const denseSlack = 64

// newIDIndex indexes entries, whose ids are distinct and positive.
func newIDIndex(entries []idPos) idIndex {
	x := idIndex{sparse: map[int64]docPos{}, n: len(entries)}
	limit := int64(2*len(entries) + denseSlack)
	top := int64(0) // the largest id below limit
	for _, e := range entries {
		if e.id < limit {
			top = max(top, e.id)
		}
	}
	x.dense = make([]docPos, top+1)
	for _, e := range entries {
		if e.id <= top {
			x.dense[e.id] = e.pos
		} else {
			x.sparse[e.id] = e.pos
		}
	}
	return x
}

// get returns the position of the document of id, 0 for none.
func (x *idIndex) get(id int64) docPos {
	if uint64(id) < uint64(len(x.dense)) {
		return x.dense[id]
	}
	return x.sparse[id]
}

// each calls f for every id in the index and the position of its document.
func (x *idIndex) each(f func(id int64, pos docPos)) {
	for id, p := range x.dense {
		if p != 0 {
			f(int64(id), p)
		}
	}
	for id, p := range x.sparse {
		f(id, p)
	}
}
