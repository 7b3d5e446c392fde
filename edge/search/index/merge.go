package index

import "sync"

// merger merges the segments of the matching courses' classes, each in (start, id) order,
// into the search's order (D12) with a binary heap of cursors: a page reads offset + limit
// classes and log(segments) comparisons for each, never the whole of every segment.
type merger struct {
	heap []cursor
}

// cursor is the next class of a segment, its end, and the course (its position in courses).
type cursor struct{ pos, end, course int32 }

// mergers are reused: a search of every course merges about as many segments as there are
// courses.
var mergers = sync.Pool{New: func() any { return new(merger) }}

func getMerger() *merger { return mergers.Get().(*merger) }

func putMerger(m *merger) {
	m.heap = m.heap[:0]
	mergers.Put(m)
}

// add adds the segment [lo, hi) of the class arrays, classes of course (a position in
// courses).
func (m *merger) add(lo, hi, course int32) { m.heap = append(m.heap, cursor{lo, hi, course}) }

// page appends to buf the merged classes that match w, skipping the first offset of them and
// stopping after limit.
func (m *merger) page(ix *Index, w window, offset, limit int64, buf []Class) []Class {
	h := m.heap[:0]
	for _, c := range m.heap {
		if c.pos = ix.next(c.pos, c.end, w); c.pos < c.end {
			h = append(h, c)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		ix.down(h, i)
	}
	for n := int64(0); len(h) > 0 && n < offset+limit; n++ {
		c := &h[0]
		if n >= offset {
			buf = append(buf, ix.class(c.pos, &ix.courses[c.course]))
		}
		if c.pos = ix.next(c.pos+1, c.end, w); c.pos >= c.end {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		ix.down(h, 0)
	}
	m.heap = h
	return buf
}

// next returns the first position from pos (before end) whose class matches w, or end.
// Every class of a segment starts within the window; with a date filter it must also end
// on or after the date.
func (ix *Index) next(pos, end int32, w window) int32 {
	if w.hasDate {
		for pos < end && ix.ends[pos] < w.date {
			pos++
		}
	}
	return pos
}

// down restores the heap order of h below position i.
func (ix *Index) down(h []cursor, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		least := l
		if r := l + 1; r < len(h) && ix.before(h[r].pos, h[l].pos) {
			least = r
		}
		if !ix.before(h[least].pos, h[i].pos) {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}

// before reports whether class a comes before class b: by start, then id (D12).
func (ix *Index) before(a, b int32) bool {
	if ix.starts[a] != ix.starts[b] {
		return ix.starts[a] < ix.starts[b]
	}
	return ix.ids[a] < ix.ids[b]
}
