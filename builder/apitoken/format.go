// Package apitoken issues, checks and stores the catalogue's API tokens.
//
// A token looks like GitHub's: a fixed prefix, a random part and a checksum,
//
//	pcat_<43 base62 characters: 32 random bytes><6 base62 characters: CRC32 of the random part>
//
// The prefix lets secret scanners recognise a leaked token, and the checksum lets the edge
// refuse a mistyped or made-up token without looking it up. Only the SHA-256 of a token is
// ever stored (Hash); the token itself is shown once, when it is created.
//
// The format functions (New, Valid, Hash) use only the standard library, so the edge can
// import this package; the storage functions (Create, List, Revoke) take a pgx connection.
package apitoken

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"math/big"
)

// Prefix starts every token.
const Prefix = "pcat_"

const (
	alphabet    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	randomBytes = 32
	// randomLen is the base62 width of 32 bytes: 62^43 > 2^256 > 62^42.
	randomLen = 43
	// checksumLen is the base62 width of a CRC32: 62^6 > 2^32.
	checksumLen = 6
)

// Len is the length of every token.
const Len = len(Prefix) + randomLen + checksumLen

// New returns a fresh token made of 32 bytes from crypto/rand.
func New() (string, error) {
	b := make([]byte, randomBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	random := encode(new(big.Int).SetBytes(b), randomLen)
	return Prefix + random + checksum(random), nil
}

// Valid reports whether token has the form New produces: the prefix, the length, only base62
// characters and a checksum that matches. It says nothing about whether the token was issued
// or revoked; that takes a lookup of Hash(token). The edge calls it on every request, so it
// allocates nothing.
func Valid(token string) bool {
	if len(token) != Len || token[:len(Prefix)] != Prefix {
		return false
	}
	body := token[len(Prefix):]
	for i := 0; i < len(body); i++ {
		if !isBase62(body[i]) {
			return false
		}
	}
	// The checksum's digits, from the last: those of crc in base62.
	crc := checksumOf(body[:randomLen])
	for i := len(body) - 1; i >= randomLen; i-- {
		if body[i] != alphabet[crc%uint32(len(alphabet))] {
			return false
		}
		crc /= uint32(len(alphabet))
	}
	return true
}

// Hash returns the SHA-256 of the whole token, the only form in which tokens are stored.
func Hash(token string) []byte {
	h := Sum(token)
	return h[:]
}

// Sum is Hash as an array, made without allocating: the edge computes it on every request.
func Sum(token string) [sha256.Size]byte {
	if len(token) > Len {
		return sha256.Sum256([]byte(token))
	}
	// Converting the string would allocate; a copy on the stack does not.
	var b [Len]byte
	n := copy(b[:], token)
	return sha256.Sum256(b[:n])
}

// checksum is the CRC32 (IEEE) of the base62 text of the random part, as GitHub computes
// its token checksums; working on the text lets a scanner check a token without decoding it.
func checksum(random string) string {
	return encode(new(big.Int).SetUint64(uint64(checksumOf(random))), checksumLen)
}

// checksumOf is the CRC32 (IEEE) of s, computed over the string with the standard table:
// hash/crc32 takes a []byte, and converting the text would allocate on every request.
func checksumOf(s string) uint32 {
	crc := ^uint32(0)
	for i := 0; i < len(s); i++ {
		crc = crc32.IEEETable[byte(crc)^s[i]] ^ crc>>8
	}
	return ^crc
}

// encode writes n in base62, left-padded with zeros to width, so that every token has the
// same length whatever its random bytes.
func encode(n *big.Int, width int) string {
	out := make([]byte, width)
	base := big.NewInt(int64(len(alphabet)))
	rem := new(big.Int)
	n = new(big.Int).Set(n)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, rem)
		out[i] = alphabet[rem.Int64()]
	}
	return string(out)
}

func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}
