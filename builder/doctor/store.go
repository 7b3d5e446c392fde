package doctor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// probePrefix begins the name of the store check's probe object, which the edge never reads.
// It is no folder: a folder store would keep the empty folder after the probe is deleted.
const probePrefix = "doctor-probe-"

// checkStore checks that the builder can write the store (a probe object written, read back
// and deleted) and that the edge can read its pointer to the current snapshot.
func checkStore(ctx context.Context, o store.Options) []Check {
	w := Check{Name: "store writable"}
	st, err := store.Open(ctx, o)
	if err != nil {
		w.Detail = err.Error()
		w.Fix = "set store.url (and store.endpoint, store.region for S3)"
		return []Check{w}
	}
	w.Detail = st.String()
	if err := probe(ctx, st); err != nil {
		w.Detail += ": " + err.Error()
		w.Fix = storeFix(err)
	} else {
		w.OK, w.Detail = true, st.String()+": an object written, read back and deleted"
	}
	p := Check{Name: "store pointer"}
	ptr, err := snapshot.ReadPointer(ctx, st)
	switch {
	case errors.Is(err, snapshot.ErrNoSnapshot):
		p.OK, p.Detail = true, snapshot.PointerKey+" not there yet: nothing published (builder run publishes)"
	case errors.Is(err, snapshot.ErrMalformedPointer):
		// run, rollback and status all stop at it; the builder reads a pointer without
		// its list of earlier snapshots as one written before the list existed.
		p.Detail = err.Error()
		p.Fix = fmt.Sprintf(`only the builder writes %s: write it back naming the newest snapshot under %s ({"snapshot": "ID"} for %s), then builder run`,
			snapshot.PointerKey, snapshot.ManifestPrefix, snapshot.ManifestKey("ID"))
	case err != nil:
		p.Detail = err.Error()
		p.Fix = "let the builder's credentials (and the edge's) read " + snapshot.PointerKey
	default:
		p.OK, p.Detail = true, fmt.Sprintf("%s names snapshot %s", snapshot.PointerKey, ptr.ID)
	}
	return []Check{w, p}
}

// storeFix says what to do about the store check's error err: a store that does not answer
// is a wrong store.endpoint or a stopped service, not a right to grant.
func storeFix(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return "nothing answers there: check store.endpoint (and store.url) and that the store runs"
	}
	// S3's HeadBucket, the first request, answers a wrong key as it answers a missing right
	// (403, no body), and needs the right to list the bucket, which the builder uses to
	// find its manifests.
	return "check that AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are a key of the store (a wrong one is refused as a missing right is), " +
		"and give the builder's credentials (or the folder's owner) the right to list the bucket and to create, write and delete objects there"
}

// probe writes a random object, reads it back and deletes it.
func probe(ctx context.Context, st store.Store) error {
	if err := st.Ensure(ctx); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	key, body := probePrefix+hex.EncodeToString(b), []byte("builder doctor "+hex.EncodeToString(b))
	if err := st.Put(ctx, key, body); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	got, err := st.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if string(got) != string(body) {
		return fmt.Errorf("read back %d bytes that differ from those written", len(got))
	}
	if err := st.Delete(ctx, key); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}
