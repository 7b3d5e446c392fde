package search

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendPage appends pg as JSON, byte for byte what encoding/json writes for it (its tags
// say the shape; TestAppendPage and FuzzAppendJSONString hold the two together). By hand
// because it pays where every search is answered anew: 25 classes took 40 µs with
// encoding/json against 6 µs here, an eighth of the edge's CPU for a search of the long
// tail through the index (make bench, edge.search_cache 0).
func appendPage(b []byte, pg *page) []byte {
	b = append(b, `{"data":[`...)
	for i := range pg.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, &pg.Data[i])
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, pg.Total, 10)
	b = append(b, `,"last_page":`...)
	b = strconv.AppendInt(b, pg.LastPage, 10)
	return append(b, '}')
}

func appendItem(b []byte, it *item) []byte {
	b = append(b, `{"id":"`...)
	b = strconv.AppendInt(b, it.ID, 10)
	b = append(b, `","course_id":"`...)
	b = strconv.AppendInt(b, it.CourseID, 10)
	b = append(b, `","course":`...)
	b = appendJSONString(b, it.Course)
	b = append(b, `,"start":"`...)
	b = time.Time(it.Start).AppendFormat(b, time.DateOnly)
	b = append(b, `","end":"`...)
	b = time.Time(it.End).AppendFormat(b, time.DateOnly)
	b = append(b, `","type":`...)
	b = appendJSONString(b, it.Type)
	b = append(b, `,"city":`...)
	b = appendNullString(b, it.City)
	b = append(b, `,"state":`...)
	b = appendNullString(b, it.State)
	b = append(b, `,"schedule":`...)
	b = appendNullString(b, it.Schedule)
	b = append(b, `,"cost":`...)
	b = strconv.AppendInt(b, it.Cost, 10)
	b = append(b, `,"full":`...)
	b = strconv.AppendBool(b, it.Full)
	b = append(b, `,"available_seats":`...)
	if it.Seats == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *it.Seats, 10)
	}
	return append(b, '}')
}

func appendNullString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json writes it, with its
// default HTML escaping: ", \ and control characters escaped (\b, \f, \n, \r, \t short),
// <, > and & as \u003c etc., invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscaped(b, c)
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

// appendEscaped appends the escape of the ASCII byte c.
func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
