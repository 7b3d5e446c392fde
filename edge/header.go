package edge

import "unsafe"

// headerText holds the text of one or two header values of a response and the one-element
// slices that carry them, in one allocation: a request whose values are made for it (its
// id, its rate-limit counts, a document's ETag and length) pays one allocation for each
// such pair instead of two or three.
type headerText struct {
	first, second [1]string
	buf           [96]byte // room for a quoted SHA-256 tag with -gz and a 20-digit number
}

// values returns t, which must have been appended to buf[:0] and not written since, as the
// first value up to split and the second from there; a negative split makes only the first.
// The slices have no spare capacity, so that a middleware appending a value copies them.
func (v *headerText) values(t []byte, split int) (first, second []string) {
	var s string
	if len(t) > 0 && &t[0] == &v.buf[0] {
		// The values share v's allocation: nothing writes buf again.
		s = unsafe.String(&v.buf[0], len(t))
	} else {
		s = string(t) // longer than buf: never for the values of this package
	}
	if split < 0 {
		v.first[0] = s
		return v.first[:], nil
	}
	v.first[0], v.second[0] = s[:split], s[split:]
	return v.first[:], v.second[:]
}

// header returns v as a header value that cannot be appended to in place.
func header(v string) []string { return []string{v}[:1:1] }
