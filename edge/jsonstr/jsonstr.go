// Package jsonstr quotes strings as JSON for the edge's hand-written encoders (the search
// page and the request-log line), which write per request what encoding/json and log/slog
// would write, without their reflection and allocations. It matches either byte for byte.
package jsonstr

import "unicode/utf8"

// Mode says whose quoting Append matches.
type Mode uint8

const (
	// EncodingJSON is encoding/json's default: <, > and & escaped as \u003c etc., \b and \f
	// short.
	EncodingJSON Mode = iota
	// Slog is log/slog's JSON handler: no HTML escaping, \b and \f as \u0008 and \u000c.
	Slog
)

const hexDigits = "0123456789abcdef"

// plain[m][c] says whether ASCII byte c is written as itself in mode m: a table rather than
// a chain of comparisons, since the loop below runs once per byte of every string.
var plain = func() (t [2][utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf; c++ {
		t[Slog][c] = c != '"' && c != '\\'
		t[EncodingJSON][c] = t[Slog][c] && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Append appends s quoted as a JSON string in mode m. In both modes invalid UTF-8 is
// written as \ufffd and U+2028 and U+2029 are escaped.
func Append(b []byte, s string, m Mode) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plain[m][c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscaped(b, c, m)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscaped appends the escape of the ASCII byte c in mode m.
func appendEscaped(b []byte, c byte, m Mode) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(b, '\\', c)
	case c == '\n':
		return append(b, '\\', 'n')
	case c == '\r':
		return append(b, '\\', 'r')
	case c == '\t':
		return append(b, '\\', 't')
	case c == '\b' && m == EncodingJSON:
		return append(b, '\\', 'b')
	case c == '\f' && m == EncodingJSON:
		return append(b, '\\', 'f')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
