package snapshot_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

func TestCoursesRoute(t *testing.T) {
	tests := []struct {
		types []string
		want  string
	}{
		{nil, "/public/courses"},
		{[]string{"Online", "Blended", "Brick and Mortar"}, "/public/courses"},
		{[]string{"Online"}, "/public/courses?type=Online"},
		{[]string{"Online", "Blended"}, "/public/courses?type=Blended&type=Online"},
		{[]string{"Online", "Online", "Blended", "Blended"}, "/public/courses?type=Blended&type=Online"},
		{[]string{"Brick and Mortar", "Blended"}, "/public/courses?type=Blended&type=Brick and Mortar"},
	}
	for _, tt := range tests {
		if got := snapshot.CoursesRoute(tt.types); got != tt.want {
			t.Errorf("CoursesRoute(%q) = %q, want %q", tt.types, got, tt.want)
		}
	}
}

func TestKeys(t *testing.T) {
	h := snapshot.Hash([]byte("{}"))
	// SHA-256 of "{}", from sha256sum.
	const want = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
	if h != want {
		t.Fatalf("Hash({}) = %s, want %s", h, want)
	}
	if got := snapshot.ObjectKey(h); got != "objects/44/"+want+".json" {
		t.Errorf("ObjectKey = %s", got)
	}
	id := snapshot.NewID(time.Date(2026, 11, 21, 22, 10, 0, 123e6, time.UTC), "x")
	if !strings.HasPrefix(id, "20261121T221000.123Z-") {
		t.Errorf("NewID = %s, want it to start with the build time", id)
	}
	if got := snapshot.IDFromManifestKey(snapshot.ManifestKey(id)); got != id {
		t.Errorf("IDFromManifestKey(ManifestKey(%s)) = %s", id, got)
	}
	for _, k := range []string{"current.json", "objects/44/x.json", "snapshots/x.txt"} {
		if got := snapshot.IDFromManifestKey(k); got != "" {
			t.Errorf("IDFromManifestKey(%q) = %q, want empty", k, got)
		}
	}
	if got := snapshot.HashFromObjectKey(snapshot.ObjectKey(h)); got != h {
		t.Errorf("HashFromObjectKey(ObjectKey(%s)) = %s", h, got)
	}
	for _, k := range []string{"current.json", "objects/44/x.json", "objects/45/" + want + ".json", "objects/44/" + want,
		"snapshots/" + want + ".json", "objects/44/" + want + ".json/x"} {
		if got := snapshot.HashFromObjectKey(k); got != "" {
			t.Errorf("HashFromObjectKey(%q) = %q, want empty", k, got)
		}
	}
	later := snapshot.NewID(time.Date(2026, 11, 21, 22, 10, 1, 0, time.UTC), "a")
	if !(id < later) {
		t.Errorf("ids do not sort in build order: %s >= %s", id, later)
	}
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	s := store.NewLocal(t.TempDir())
	if _, err := snapshot.ReadCurrent(ctx, s); !errors.Is(err, snapshot.ErrNoSnapshot) {
		t.Fatalf("ReadCurrent of an empty store: %v, want ErrNoSnapshot", err)
	}
	body := []byte(`{"id":1}`)
	e := snapshot.Entry{Hash: snapshot.Hash(body), Size: int64(len(body))}
	put := func(key, v string) {
		if err := s.Put(ctx, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put(snapshot.ObjectKey(e.Hash), string(body))
	put(snapshot.ManifestKey("s1"), `{"snapshot":"s1","documents":{"/public/course/1":{"sha256":"`+e.Hash+`","size":8}}}`)
	put(snapshot.PointerKey, `{"snapshot":"s1"}`)
	m, err := snapshot.ReadCurrent(ctx, s)
	if err != nil || m.ID != "s1" || m.Documents["/public/course/1"] != e {
		t.Fatalf("ReadCurrent = %+v, %v", m, err)
	}
	// What the writers write, the readers read back.
	built := time.Date(2026, 11, 21, 22, 10, 0, 0, time.UTC)
	written := &snapshot.Manifest{ID: "s0", Header: snapshot.Header{BuiltAt: built}, Documents: map[string]snapshot.Entry{"/public/course/1": e}}
	if err := snapshot.WriteManifest(ctx, s, written); err != nil {
		t.Fatalf("WriteManifest: %v", err)
	}
	if err := snapshot.WritePointer(ctx, s, snapshot.Pointer{ID: "s0", PublishedAt: built, Previous: []string{"s1"}}); err != nil {
		t.Fatalf("WritePointer: %v", err)
	}
	if p, err := snapshot.ReadPointer(ctx, s); err != nil || p.ID != "s0" || !p.PublishedAt.Equal(built) || len(p.Previous) != 1 {
		t.Errorf("ReadPointer after WritePointer = %+v, %v", p, err)
	}
	if m, err := snapshot.ReadCurrent(ctx, s); err != nil || m.ID != "s0" || !m.BuiltAt.Equal(built) || m.Documents["/public/course/1"] != e {
		t.Errorf("ReadCurrent after WriteManifest = %+v, %v", m, err)
	}
	put(snapshot.PointerKey, `{"snapshot":"s1"}`)
	m, err = snapshot.ReadCurrent(ctx, s)
	if err != nil || m.ID != "s1" || m.Documents["/public/course/1"] != e {
		t.Fatalf("ReadCurrent = %+v, %v", m, err)
	}
	if got, err := snapshot.ReadDocument(ctx, s, e); err != nil || string(got) != string(body) {
		t.Errorf("ReadDocument = %q, %v", got, err)
	}
	// A corrupt object is refused, never served.
	put(snapshot.ObjectKey(e.Hash), `{"id":2}`)
	if _, err := snapshot.ReadDocument(ctx, s, e); err == nil {
		t.Error("ReadDocument of a corrupt object: no error")
	}
	// A manifest that names another snapshot, and a malformed pointer, are errors.
	put(snapshot.ManifestKey("s2"), `{"snapshot":"s1"}`)
	if _, err := snapshot.ReadManifest(ctx, s, "s2"); err == nil {
		t.Error("ReadManifest of a manifest naming another snapshot: no error")
	}
	put(snapshot.PointerKey, `{}`)
	if _, err := snapshot.ReadPointer(ctx, s); err == nil || errors.Is(err, snapshot.ErrNoSnapshot) {
		t.Errorf("ReadPointer of a malformed pointer: %v, want a malformed-pointer error", err)
	}
}
