package publish

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/snapshot"
)

// TestFeedNumberPastLimitRefused: a publication that would give out a change number past
// 2^53-1, which a partner's JSON number cannot hold exactly (D35), is refused with an error
// saying so, and publishes nothing: the pointer still names the snapshot before, and no
// manifest is written.
func TestFeedNumberPastLimitRefused(t *testing.T) {
	s := emptyStore(t)
	p := newPublisher(s, 10)
	p.wall = &stillWall{t: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)}
	before := mustPublish(t, p, feedDocs())
	objectsBefore := len(listKeys(t, s, snapshot.ObjectPrefix))

	// Three changes (class 11 changed, 12 removed, 13 added) numbered from 2^53-3: the last
	// is 2^53.
	p.wall = &stillWall{t: time.UnixMicro(snapshot.MaxChangeNumber - 2)}
	docs := feedDocs()
	docs["/public/class/11"] = []byte(`{"course_id":1,"cost":1100}`)
	delete(docs, "/public/class/12")
	docs["/public/class/13"] = []byte(`{"course_id":2,"cost":13}`)
	_, err := p.Publish(context.Background(), docs, meta(2, 3), false)
	if err == nil || !strings.Contains(err.Error(), "change number 9007199254740992 is past 2^53-1") {
		t.Fatalf("Publish past 2^53-1 = %v, want an error naming change number 9007199254740992 past 2^53-1", err)
	}
	if errors.Is(err, ErrCollect) {
		t.Errorf("the refusal wraps ErrCollect, which says the snapshot was published: %v", err)
	}
	if got := currentID(t, s); got != before.SnapshotID {
		t.Errorf("refused publication moved the pointer to %s, want %s", got, before.SnapshotID)
	}
	if keys := listKeys(t, s, snapshot.ManifestPrefix); len(keys) != 1 {
		t.Errorf("manifests after the refusal: %v, want the one before only", keys)
	}
	// Refused before anything is stored: class 11's and 13's new documents are not left
	// behind for the collection to find.
	if got, want := len(listKeys(t, s, snapshot.ObjectPrefix)), objectsBefore; got != want {
		t.Errorf("objects after the refusal: %d, want the %d before it", got, want)
	}
}
