package docstore

import (
	"crypto/sha256"
	"encoding/hex"
)

// Document is one static document ready to send: its bytes and its gzip body, made once
// when the document is first loaded, back to back in one buffer of exactly their size.
// Documents are immutable and shared between routes with the same content and between
// snapshots, which is what lets a new snapshot reuse every unchanged document instead of
// fetching and compressing it again.
//
// A catalogue has a hundred thousand documents of a few hundred bytes, so what a document
// holds besides its bytes counts (56 bytes): the hash is kept raw, its bytes are found by
// offsets rather than slices, and header values are made per response by the server
// rather than stored. The bytes of a snapshot's documents are in chunks outside the Go
// heap (arena.go): a caller that hands Body or GzipBody to something that may use them
// after the Document itself is dead must keep the Document alive until then
// (runtime.KeepAlive).
type Document struct {
	hash  [sha256.Size]byte // of the body; it names the object and makes the ETags
	chunk *chunk            // the memory of its bytes, kept mapped while d is used
	off   uint32            // where its bytes start in chunk.mem: the body, then the gzip body
	split uint32            // off + len(body)
	end   uint32            // where its bytes end
}

// placed returns the document whose body of split bytes and gzip body end at off+n in c.
func placed(hash [sha256.Size]byte, c *chunk, off, split, n int) Document {
	return Document{hash: hash, chunk: c, off: uint32(off), split: uint32(off + split), end: uint32(off + n)}
}

// Hash is the SHA-256 of the body.
func (d *Document) Hash() [sha256.Size]byte { return d.hash }

// Body is the document's JSON, capped at its length so that an append cannot write into
// the next document.
func (d *Document) Body() []byte { return d.chunk.mem[d.off:d.split:d.split] }

// GzipBody is the gzip encoding of Body, compressed once when the document was loaded.
func (d *Document) GzipBody() []byte { return d.chunk.mem[d.split:d.end:d.end] }

func (d *Document) bytes() []byte   { return d.chunk.mem[d.off:d.end:d.end] }
func (d *Document) hexHash() string { return hex.EncodeToString(d.hash[:]) }
