package snapshot

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// encodeManifest returns json.Marshal(m), byte for byte, without encoding/json's reflection
// over the documents: every build writes the whole manifest, and at 100,000 classes
// encoding/json spent about half of a one-class change build's CPU on its map (sorting
// reflected keys, encoding each entry by reflection). The header and the feed, small, still
// go through encoding/json.
func encodeManifest(m *Manifest) ([]byte, error) {
	head, err := json.Marshal(struct {
		ID string `json:"snapshot"`
		Header
	}{m.ID, m.Header})
	if err != nil {
		return nil, err
	}
	var feed []byte
	if m.Feed != nil {
		if feed, err = json.Marshal(m.Feed); err != nil {
			return nil, err
		}
	}
	// About 100 bytes an entry: a class route, its hash, size and change number.
	b := make([]byte, 0, len(head)+len(feed)+len(m.Documents)*112+32)
	b = append(b, head[:len(head)-1]...) // without its "}": the header always has fields
	b = append(b, `,"documents":`...)
	b = appendDocuments(b, m.Documents)
	if feed != nil {
		b = append(b, `,"feed":`...)
		b = append(b, feed...)
	}
	return append(b, '}'), nil
}

// appendDocuments appends documents as encoding/json writes a map[string]Entry: null when
// nil, else its keys in sorted order, each entry's fields in declaration order, modified
// left out when 0 (omitempty).
func appendDocuments(b []byte, documents map[string]Entry) []byte {
	if documents == nil {
		return append(b, "null"...)
	}
	type doc struct {
		route string
		Entry
	}
	docs := make([]doc, 0, len(documents))
	for r, e := range documents {
		docs = append(docs, doc{r, e})
	}
	slices.SortFunc(docs, func(x, y doc) int { return strings.Compare(x.route, y.route) })
	b = append(b, '{')
	for i, d := range docs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, d.route)
		b = append(b, `:{"sha256":`...)
		b = appendString(b, d.Hash)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, d.Size, 10)
		if d.Modified != 0 {
			b = append(b, `,"modified":`...)
			b = strconv.AppendInt(b, d.Modified, 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendString appends s as a JSON string the way encoding/json does. Routes and hashes are
// printable ASCII that needs no escape, copied as they are; anything else (a quote, a
// backslash, a control character, <, > or & that encoding/json escapes for HTML, non-ASCII)
// is left to encoding/json itself.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
