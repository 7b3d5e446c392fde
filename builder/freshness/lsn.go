package freshness

import (
	"fmt"
	"strconv"
	"strings"
)

// LSN is a position in the primary's write-ahead log, as PostgreSQL's pg_lsn type holds it;
// 0 is none.
type LSN uint64

// ParseLSN reads an LSN in PostgreSQL's text form, two hexadecimal halves: 16/B374D848.
func ParseLSN(s string) (LSN, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("read WAL position %q: want the form 16/B374D848", s)
	}
	return LSN(h<<32 | l), nil
}

// String writes l in PostgreSQL's text form.
func (l LSN) String() string { return fmt.Sprintf("%X/%X", uint64(l)>>32, uint64(l)&0xFFFFFFFF) }

// Page header sizes of the write-ahead log: every 8 KiB page starts with a short header, the
// first page of each segment with a long one.
const (
	walPage        = 8192
	walShortHeader = 24
	walLongHeader  = 40
)

// RecordEnd returns the position a standby reports once it has replayed everything before
// the insert position l. When the last record ends exactly at a page boundary, PostgreSQL
// reports the insert position past the next page's header, where no record has been
// written yet; a standby's replay position stops at the boundary, so waiting for l itself
// would wait for the next record. No record ends 24 or 40 bytes into a page (the header
// alone fills them), so a position there is always just past a header.
func (l LSN) RecordEnd() LSN {
	switch off := uint64(l) % walPage; off {
	case walShortHeader, walLongHeader:
		return l - LSN(off)
	}
	return l
}
