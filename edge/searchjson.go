package edge

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json writes it (with its
// default HTML escaping), so a search page reads like every other document the catalogue
// serves: ", \ and control characters escaped, <, > and & as \u003c etc., invalid UTF-8 as
// \ufffd, and U+2028/U+2029 escaped. The search encodes by hand because it is on the hot
// path; FuzzAppendJSONString holds it to encoding/json's output.
func appendJSONString(b []byte, s string) []byte { return appendQuoted(b, s, true) }

// appendQuoted appends s as a JSON string. std selects encoding/json's form (<, > and &
// escaped, \b and \f short); otherwise slog's JSON handler's (neither: \b and \f as \u0008
// and \u000c). Both write invalid UTF-8 as \ufffd and escape U+2028 and U+2029.
func appendQuoted(b []byte, s string, std bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!std || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b' && std:
				b = append(b, '\\', 'b')
			case c == '\f' && std:
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
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
