package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// What collection needs of manifests it does not hold (builder/publish, gc.go): the object
// hashes one references, read from its bytes faster than decoding them.

// substringLimit is how many candidate hashes UsedHashes looks up by substring search; beyond
// it, decoding the manifest once is cheaper than one search of ~11 MB per hash.
const substringLimit = 64

// UsedHashes returns the hashes among hashes that the manifest b of snapshot id references,
// in the order of hashes.
//
// Decoding a manifest of 100,000 documents takes longer than the whole rest of collection,
// so a few hashes are looked up as substrings instead. That is exact in the direction that
// matters: a manifest that references h holds the JSON string h, and JSON can spell a
// string's characters either literally or as \uXXXX escapes. When b escapes no hex digit
// (escapesHexDigit), every string equal to h appears in b as the 64 bytes of h, so a hash
// that is not a substring is certainly not used. A substring found elsewhere could only keep
// an object that might have gone, never delete one that is used.
func UsedHashes(b []byte, id string, hashes []string) ([]string, error) {
	// Put is atomic, so a stored manifest is whole; checking its frame still refuses a
	// truncated one at a fraction of the cost of json.Valid (~0.1 s for 11 MB).
	if t := bytes.TrimSpace(b); len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, fmt.Errorf("read manifest %s: not a JSON object", id)
	}
	var used []string
	if len(hashes) <= substringLimit && !escapesHexDigit(b) {
		for _, h := range hashes {
			if bytes.Contains(b, []byte(h)) {
				used = append(used, h)
			}
		}
		return used, nil
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", id, err)
	}
	inManifest := make(map[string]bool, len(m.Documents))
	for _, e := range m.Documents {
		inManifest[e.Hash] = true
	}
	for _, h := range hashes {
		if inManifest[h] {
			used = append(used, h)
		}
	}
	return used, nil
}

// escapesHexDigit reports whether b holds a \u escape that could spell a character of a
// lowercase hex hash: 0-9 (\u0030-\u0039) or a-f (\u0061-\u0066). encoding/json writes
// those literally; it escapes only <, >, &, U+2028, U+2029 and control characters. A
// backslash that is itself escaped (\\u0030) only makes the answer err on the safe side.
func escapesHexDigit(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u00`))
		if i < 0 || i+6 > len(b) {
			return false
		}
		hi, lo := b[i+4], b[i+5]
		if (hi == '3' && lo >= '0' && lo <= '9') || (hi == '6' && lo >= '1' && lo <= '6') {
			return true
		}
		b = b[i+4:]
	}
}

// hashPrefix precedes every hash in a manifest written by encoding/json.
var hashPrefix = []byte(`"sha256":"`)

// ScanHashes returns the hashes a manifest names, found as the values of its "sha256" keys
// without decoding it (~30 ms instead of ~170 ms for 100,000 documents). It is used only
// for the manifests being dropped, where a miss is harmless: a hash it missed is not
// deleted (the object leaks), and a hash it found wrongly is deleted only if no kept
// manifest uses it, that is only if it is garbage anyway.
func ScanHashes(b []byte) []string {
	var hashes []string
	for {
		i := bytes.Index(b, hashPrefix)
		if i < 0 {
			return hashes
		}
		b = b[i+len(hashPrefix):]
		if len(b) > 64 && b[64] == '"' && isLowerHex(b[:64]) {
			hashes = append(hashes, string(b[:64]))
		}
	}
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
