package edge

import "strings"

// Content negotiation for the static documents, written as small scanners over the header
// text so that a request allocates nothing to decide what to send.

// acceptsGzip reports whether a request with the given Accept-Encoding header should get the
// gzip body (RFC 9110 section 12.5.3). gzip (or its alias x-gzip), or else "*", must have a
// q-value above 0, and not below the q-value of identity when the client names identity:
// a client that prefers identity gets it, and on a tie the smaller body wins. Identity that
// is not named is acceptable but not preferred (12.5.3 gives it no q-value), so
// "gzip;q=0.5" alone means gzip. An absent header means identity.
func acceptsGzip(header string) bool {
	gzipQ, starQ, identityQ := -1, -1, -1
	for header != "" {
		var elem string
		elem, header, _ = strings.Cut(header, ",")
		name, params, _ := strings.Cut(elem, ";")
		q := parseQ(params)
		switch name = strings.TrimSpace(name); {
		case strings.EqualFold(name, "gzip"), strings.EqualFold(name, "x-gzip"):
			gzipQ = max(gzipQ, q)
		case name == "*":
			starQ = q
		case strings.EqualFold(name, "identity"):
			identityQ = q
		}
	}
	if gzipQ < 0 {
		gzipQ = starQ
	}
	return gzipQ > 0 && gzipQ >= identityQ
}

// parseQ returns the q-value of an element's parameters in thousandths: 1000 when there is
// none, 0 for a malformed one (a value the client did not say it accepts is not accepted).
func parseQ(params string) int {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			return qValue(strings.TrimSpace(v))
		}
	}
	return 1000
}

// qValue parses a qvalue: "0" or "1", optionally followed by "." and up to three digits.
func qValue(v string) int {
	if v == "" || v[0] != '0' && v[0] != '1' {
		return 0
	}
	n := int(v[0]-'0') * 1000
	if len(v) == 1 {
		return n
	}
	if v[1] != '.' || len(v) > 5 {
		return 0
	}
	scale := 100
	for i := 2; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0
		}
		n += int(v[i]-'0') * scale
		scale /= 10
	}
	return min(n, 1000)
}

// noneMatch reports whether If-None-Match header lines match etag (a quoted strong tag) by
// the weak comparison RFC 9110 section 13.1.2 prescribes: W/"x" matches "x". "*" matches
// any current representation. A malformed list matches nothing, so the client gets the
// whole document.
func noneMatch(lines []string, etag string) bool {
	for _, line := range lines {
		for {
			line = strings.TrimLeft(line, " \t,")
			if line == "" {
				break
			}
			if line[0] == '*' {
				return true
			}
			tag, rest, ok := scanETag(line)
			if !ok {
				break
			}
			if tag == etag {
				return true
			}
			line = rest
		}
	}
	return false
}

// scanETag reads one entity tag from the start of s and returns it without any W/ prefix,
// quotes included, and the text after it. etagc may contain commas, so the tag ends at
// its closing quote, not at a comma.
func scanETag(s string) (tag, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' {
		return "", "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return "", "", false
	}
	return s[:end+2], s[end+2:], true
}
