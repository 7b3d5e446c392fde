package snapshot

import (
	"strconv"
	"strings"
	"time"
)

// Kinds of the items of the two RPDE feeds (D35), one feed per kind.
const (
	KindCourse = "Course"
	KindClass  = "Class"
)

// MaxChangeNumber is the greatest change number: 2^53−1, the largest integer a JavaScript
// number holds exactly (D35).
const MaxChangeNumber = 1<<53 - 1

// Feed is what a snapshot publishes for the RPDE feeds beside the change numbers of its
// course and class documents (Entry.Modified): the deletions still announced and the
// high-water mark of the numbers given out.
type Feed struct {
	// Last is the greatest change number given out up to this snapshot, tombstones and
	// documents since dropped included: every number of a later snapshot is greater (D39).
	Last int64 `json:"last"`
	// Tombstones are the courses and classes no longer served, at most feeds.retention
	// after their deletion, sorted by change number. A tombstone carries no data (D28).
	Tombstones []Tombstone `json:"tombstones"`
}

// Tombstone announces that the document of Route is no longer served.
type Tombstone struct {
	Route    string    `json:"route"`
	Modified int64     `json:"modified"` // its change number
	At       time.Time `json:"at"`       // when the build that removed it started
}

// FeedRoute says whether route is the document of one course or class, which the feeds
// carry, and returns its kind and id.
func FeedRoute(route string) (kind string, id int64, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(route, ClassRoutePrefix):
		kind, rest = KindClass, route[len(ClassRoutePrefix):]
	case strings.HasPrefix(route, CourseRoutePrefix):
		kind, rest = KindCourse, route[len(CourseRoutePrefix):]
	default:
		return "", 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != rest {
		return "", 0, false
	}
	return kind, id, true
}
