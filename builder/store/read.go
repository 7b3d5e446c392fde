package store

import (
	"bytes"
	"fmt"
	"io"
)

// trustedLength is the most a read preallocates on the word of Content-Length; beyond it
// the buffer grows with what really arrives.
const trustedLength = 1 << 20

// readMax reads r to its end into a buffer of capacity size, refusing more than limit
// bytes (limit < 0: no limit).
func readMax(r io.Reader, key string, size, limit int64) ([]byte, error) {
	if limit >= 0 {
		r = io.LimitReader(r, limit+1)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead)) // room to read the EOF without growing
	if _, err := io.Copy(buf, r); err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	if limit >= 0 && int64(buf.Len()) > limit {
		return nil, fmt.Errorf("get %s: more than %d bytes: %w", key, limit, ErrTooLarge)
	}
	return buf.Bytes(), nil
}
