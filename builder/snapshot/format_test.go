package snapshot_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// The published format, byte for byte: what WriteManifest, WriteDelta and WritePointer put
// in the store, written out by hand from the field names the package documents, so that a
// change of the Go types that changes a byte of what edges and older builders read fails
// here. The expected values are not copied from output.
const (
	goldenID   = "20270301T221000.123Z-0a1b2c3d"
	goldenBase = "20270301T220000.000Z-00000000"
	hashA      = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
	hashB      = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
	hashC      = "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d"
)

// goldenManifest has every field of the format set: a change build (D35's change numbers,
// a tombstone of D28) rendered for 1 March 2027 in Europe/Paris (D1).
func goldenManifest() *snapshot.Manifest {
	built := time.Date(2027, 3, 1, 22, 10, 0, 123e6, time.UTC)
	noticed := time.Date(2027, 3, 1, 22, 9, 59, 0, time.UTC)
	return &snapshot.Manifest{
		ID: goldenID,
		Header: snapshot.Header{
			BuiltAt: built, Today: "2027-03-01", Timezone: "Europe/Paris",
			Counts: snapshot.Counts{Courses: 1, Classes: 1, Documents: 3},
			Build: &snapshot.Build{
				Trigger: snapshot.TriggerChange, Incremental: true, Base: goldenBase,
				Notifications: map[string]int{"classes": 2}, NoticedAt: &noticed,
				Rendered: 2, Changed: 1, Removed: 1, Routes: []string{"/public/class/21", "/public/class/30"},
			},
		},
		Documents: map[string]snapshot.Entry{
			"/public/courses?type=Blended&type=Online": {Hash: hashA, Size: 2},
			"/public/course/1":                         {Hash: hashB, Size: 120, Modified: 4},
			"/public/class/21":                         {Hash: hashC, Size: 98, Modified: 6},
		},
		Feed: &snapshot.Feed{Last: 7, Tombstones: []snapshot.Tombstone{
			{Route: "/public/class/30", Modified: 7, At: built},
		}},
	}
}

const goldenHeader = `"built_at":"2027-03-01T22:10:00.123Z","today":"2027-03-01","timezone":"Europe/Paris",` +
	`"counts":{"courses":1,"classes":1,"documents":3},` +
	`"build":{"trigger":"change","incremental":true,"base":"` + goldenBase + `","notifications":{"classes":2},` +
	`"noticed_at":"2027-03-01T22:09:59Z","rendered":2,"changed":1,"removed":1,"routes":["/public/class/21","/public/class/30"]}`

const goldenFeed = `"feed":{"last":7,"tombstones":[{"route":"/public/class/30","modified":7,"at":"2027-03-01T22:10:00.123Z"}]}`

// Routes sort as encoding/json sorts map keys; & is written \u0026 (which UsedHashes relies on).
const goldenManifestJSON = `{"snapshot":"` + goldenID + `",` + goldenHeader + `,"documents":{` +
	`"/public/class/21":{"sha256":"` + hashC + `","size":98,"modified":6},` +
	`"/public/course/1":{"sha256":"` + hashB + `","size":120,"modified":4},` +
	`"/public/courses?type=Blended\u0026type=Online":{"sha256":"` + hashA + `","size":2}},` +
	goldenFeed + `}`

// A delta names its base right after its id, and lists only the routes touched.
const goldenDeltaJSON = `{"snapshot":"` + goldenID + `","base":"` + goldenBase + `",` + goldenHeader + `,"documents":{` +
	`"/public/class/21":{"sha256":"` + hashC + `","size":98,"modified":6}},` +
	`"removed":["/public/class/30"],` + goldenFeed + `}`

// A manifest written before builds and feeds were recorded has neither key; today and
// timezone are written even when empty.
const goldenOldManifestJSON = `{"snapshot":"s0","built_at":"2026-11-21T22:10:00Z","today":"","timezone":"",` +
	`"counts":{"courses":0,"classes":0,"documents":1},"documents":{"/public/popular":{"sha256":"` + hashA + `","size":2}}}`

const goldenPointerJSON = `{"snapshot":"` + goldenID + `","published_at":"2027-03-01T22:10:01Z","previous":["` + goldenBase + `"],"base":"` + goldenBase + `"}`

func TestFormatIsByteForByte(t *testing.T) {
	ctx := context.Background()
	s := store.NewLocal(t.TempDir())
	m := goldenManifest()
	old := &snapshot.Manifest{ID: "s0", Header: snapshot.Header{
		BuiltAt: time.Date(2026, 11, 21, 22, 10, 0, 0, time.UTC), Counts: snapshot.Counts{Documents: 1}},
		Documents: map[string]snapshot.Entry{"/public/popular": {Hash: hashA, Size: 2}}}
	d := snapshot.NewDelta(m, goldenBase, []string{"/public/class/21", "/public/class/30"})
	ptr := snapshot.Pointer{ID: goldenID, PublishedAt: time.Date(2027, 3, 1, 22, 10, 1, 0, time.UTC),
		Previous: []string{goldenBase}, Base: goldenBase}
	for _, err := range []error{snapshot.WriteManifest(ctx, s, m), snapshot.WriteManifest(ctx, s, old),
		snapshot.WriteDelta(ctx, s, d), snapshot.WritePointer(ctx, s, ptr)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]string{
		snapshot.ManifestKey(goldenID): goldenManifestJSON,
		snapshot.ManifestKey("s0"):     goldenOldManifestJSON,
		snapshot.DeltaKey(goldenID):    goldenDeltaJSON,
		snapshot.PointerKey:            goldenPointerJSON,
	} {
		got, err := s.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", key, got, want)
		}
	}
	// And what is written reads back as it was.
	if got, err := snapshot.ReadManifest(ctx, s, goldenID); err != nil {
		t.Error(err)
	} else if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("ReadManifest mismatch (-want +got):\n%s", diff)
	}
	if got, err := snapshot.ReadDelta(ctx, s, goldenID); err != nil {
		t.Error(err)
	} else if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("ReadDelta mismatch (-want +got):\n%s", diff)
	}
}

// ReadHeader reads a manifest's header alone, and refuses one that names another snapshot
// as ReadManifest does.
func TestReadHeader(t *testing.T) {
	ctx := context.Background()
	s := store.NewLocal(t.TempDir())
	m := goldenManifest()
	if err := snapshot.WriteManifest(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	if got, err := snapshot.ReadHeader(ctx, s, goldenID); err != nil {
		t.Error(err)
	} else if diff := cmp.Diff(m.Header, got); diff != "" {
		t.Errorf("ReadHeader mismatch (-want +got):\n%s", diff)
	}
	if err := s.Put(ctx, snapshot.ManifestKey("other"), []byte(goldenManifestJSON)); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.ReadHeader(ctx, s, "other"); err == nil {
		t.Error("ReadHeader of a manifest naming another snapshot: no error")
	}
	if _, err := snapshot.ReadHeader(ctx, s, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadHeader of a missing manifest: %v, want store.ErrNotFound", err)
	}
}
