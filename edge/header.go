package edge

// headerText holds the text of one or two header values of a response and the one-element
// slices that carry them: a request whose values are made for it (its id, its rate-limit
// counts, a document's ETag and length) pays two allocations for each such pair (this and
// the text) instead of three or four. Sharing buf with the values through unsafe.String
// would save one allocation more per pair, three per static read, but no CPU time that a
// benchmark could tell apart (BenchmarkStaticRead and BenchmarkStaticServe, 8 alternating
// runs: within noise, p > 0.5), so the text is copied.
type headerText struct {
	first, second [1]string
	buf           [96]byte // room for a quoted SHA-256 tag with -gz and a 20-digit number
}

// values returns t, typically appended to buf[:0], as the first value up to split and the
// second from there; a negative split makes only the first.
// The slices have no spare capacity, so that a middleware appending a value copies them.
func (v *headerText) values(t []byte, split int) (first, second []string) {
	s := string(t)
	if split < 0 {
		v.first[0] = s
		return v.first[:], nil
	}
	v.first[0], v.second[0] = s[:split], s[split:]
	return v.first[:], v.second[:]
}

// header returns v as a header value that cannot be appended to in place.
func header(v string) []string { return []string{v}[:1:1] }
