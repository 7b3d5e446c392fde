package apitoken

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Valid tokens written out by hand: the checksums were computed with Python's zlib.crc32 and
// a separate base62 encoder, not with this package.
const (
	handToken = "pcat_7kQ2vXr9LmP4sTn8WbYc3HdJf6GzA1eRuK5oNqVwMxE1JgdEX"
	zeroToken = "pcat_00000000000000000000000000000000000000000002CZclj"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name  string
		token string
		want  bool
	}{
		{"hand-made token", handToken, true},
		{"all-zero random part", zeroToken, true},
		{"random part changed", strings.Replace(handToken, "7kQ2", "7kQ3", 1), false},
		{"case of one character changed", strings.Replace(handToken, "7kQ2", "7KQ2", 1), false},
		{"checksum changed", handToken[:Len-1] + "Y", false},
		{"checksum of another token", handToken[:Len-6] + zeroToken[Len-6:], false},
		{"wrong prefix", "ghp_" + handToken[len("pcat_"):], false},
		{"prefix in upper case", "PCAT_" + handToken[len("pcat_"):], false},
		{"truncated", handToken[:Len-1], false},
		{"one character too many", handToken + "0", false},
		{"prefix only", "pcat_", false},
		{"empty", "", false},
		{"surrounding space", " " + handToken[:Len-1], false},
		{"non-ASCII character (same byte length)", "pcat_é" + handToken[len("pcat_")+2:], false},
		{"non-ASCII character", strings.Replace(handToken, "7", "٧", 1), false},
		{"punctuation", strings.Replace(handToken, "7", "-", 1), false},
		{"NUL byte", strings.Replace(handToken, "7", "\x00", 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Valid(tt.token); got != tt.want {
				t.Errorf("Valid(%q) = %v, want %v", tt.token, got, tt.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		token, err := New()
		if err != nil {
			t.Fatalf("New() error: %v", err)
		}
		if len(token) != 54 || !strings.HasPrefix(token, "pcat_") || !Valid(token) {
			t.Fatalf("New() = %q: want a valid 54-character pcat_ token", token)
		}
		if seen[token] {
			t.Fatalf("New() returned %q twice", token)
		}
		seen[token] = true
	}
}

func TestHash(t *testing.T) {
	// echo -n pcat_7kQ2vXr9LmP4sTn8WbYc3HdJf6GzA1eRuK5oNqVwMxE1JgdEX | sha256sum
	want, _ := hex.DecodeString("0dc917a198ed32efb9f4e2ef450c274df3ffc0a661795bd7e75dccd173166134")
	if diff := cmp.Diff(want, Hash(handToken)); diff != "" {
		t.Errorf("Hash(%q) mismatch (-want +got):\n%s", handToken, diff)
	}
}

// TestNoAllocations: the edge checks a token and hashes it on every request.
func TestNoAllocations(t *testing.T) {
	badSum := handToken[:Len-1] + "Y"
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"Valid", func() { Valid(handToken) }},
		{"Valid of a bad checksum", func() { Valid(badSum) }},
		{"Sum", func() { Sum(handToken) }},
	} {
		if n := testing.AllocsPerRun(100, tt.f); n != 0 {
			t.Errorf("%s allocates %v times per call, want 0", tt.name, n)
		}
	}
}

// FuzzValid checks that Valid never panics, accepts only well-formed tokens and refuses every
// single-character change of a valid token.
func FuzzValid(f *testing.F) {
	for _, s := range []string{handToken, zeroToken, "", "pcat_", handToken[:Len-1], "ghp_abc"} {
		f.Add(s, uint(0), byte('A'))
	}
	f.Fuzz(func(t *testing.T, token string, pos uint, c byte) {
		if got, want := checksumOf(token), crc32.ChecksumIEEE([]byte(token)); got != want {
			t.Fatalf("checksumOf(%q) = %08x, want hash/crc32's %08x", token, got, want)
		}
		if h := sha256.Sum256([]byte(token)); Sum(token) != h {
			t.Fatalf("Sum(%q) is not the SHA-256 of the token", token)
		}
		if !Valid(token) {
			return
		}
		if len(token) != Len || !strings.HasPrefix(token, Prefix) {
			t.Fatalf("Valid(%q) = true for a token of the wrong shape", token)
		}
		for i := len(Prefix); i < len(token); i++ {
			if !strings.ContainsRune(alphabet, rune(token[i])) {
				t.Fatalf("Valid(%q) = true with %q at %d", token, token[i], i)
			}
		}
		h := sha256.Sum256([]byte(token))
		if !bytes.Equal(Hash(token), h[:]) || Sum(token) != h {
			t.Fatalf("Hash(%q) or Sum is not the SHA-256 of the token", token)
		}
		i := len(Prefix) + int(pos%uint(Len-len(Prefix)))
		if c == token[i] || !isBase62(c) {
			return
		}
		changed := token[:i] + string(c) + token[i+1:]
		if Valid(changed) {
			t.Fatalf("Valid(%q) = true after changing character %d of %q", changed, i, token)
		}
	})
}

// BenchmarkCheck is what the edge does with the token of every request: check its form,
// then hash it for the lookup.
func BenchmarkCheck(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(handToken) {
			b.Fatal("handToken is not valid")
		}
		_ = Hash(handToken)
	}
}
