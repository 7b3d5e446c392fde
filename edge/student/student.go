// Package student makes the class read of a signed-in student (D32): the snapshot's class
// document with registration_id and prev_reg_test_date filled from the read replica, by one
// query (templates.Student) per request. Such a response belongs to one student and to this
// moment, so nothing of it is cached.
package student

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/templates"
)

// Querier runs the one query; *pgxpool.Pool is one.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Fields are the two per-student fields of the class detail (spec 2.4, D32).
type Fields struct {
	RegistrationID *int64     // the student's lowest registration id in the class, or nil
	PrevTestDate   *time.Time // the latest test date in the course's other classes, or nil
}

// Reader reads Fields from the replica. Safe for concurrent use.
type Reader struct {
	db      Querier
	sql     string
	timeout time.Duration
}

// NewReader returns a Reader querying db with tpl's student.sql, each query bounded by
// timeout (edge.search_timeout: a hung replica must not hold the request).
func NewReader(db Querier, tpl *templates.Set, timeout time.Duration) *Reader {
	return &Reader{db: db, sql: tpl.SQL(templates.Student), timeout: timeout}
}

// Read returns student's Fields for the class classID of the course courseID. An error
// means the replica could not answer; the caller answers 503 for this read only.
func (r *Reader) Read(ctx context.Context, student string, classID, courseID int64) (Fields, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var f Fields
	err := r.db.QueryRow(ctx, r.sql, student, classID, courseID).Scan(&f.RegistrationID, &f.PrevTestDate)
	if err != nil {
		return Fields{}, fmt.Errorf("query %s: %w", templates.Student, err)
	}
	return f, nil
}

// The members of the class document this package reads or replaces.
const (
	keyCourseID       = "course_id"
	keyRegistrationID = "registration_id"
	keyPrevTestDate   = "prev_reg_test_date"
)

// ErrNotClassDocument is returned for a document that is not a class detail object with
// course_id, registration_id and prev_reg_test_date.
var ErrNotClassDocument = errors.New("not a class detail document")

// Document is a class detail document of the snapshot, with where its two per-student
// values and its course_id are.
type Document struct {
	doc      []byte // a copy of the snapshot's bytes
	values   []span // the registration_id and prev_reg_test_date values, in order
	courseID int64
}

// span is a member's value: doc[start:end], and which of the two fields it is.
type span struct {
	start, end int
	key        string
}

// Parse finds the per-student members of doc, the identity body of a class document of the
// snapshot. It runs on every student's class read, so it scans the bytes once after
// json.Valid has vouched for them, instead of decoding every member with encoding/json
// (13.7 µs a read, a quarter of the edge's CPU for it; this takes about 1 µs). FuzzDocument
// holds it to encoding/json. The Document keeps no reference to doc.
func Parse(doc []byte) (*Document, error) {
	if !json.Valid(doc) {
		return nil, fmt.Errorf("%w: not JSON", ErrNotClassDocument)
	}
	i := skipSpace(doc, 0)
	if doc[i] != '{' {
		return nil, fmt.Errorf("%w: no object", ErrNotClassDocument)
	}
	d := &Document{doc: bytes.Clone(doc)}
	seenCourse := false
	for i = skipSpace(doc, i+1); doc[i] != '}'; i = skipSpace(doc, i) {
		if doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
		k := i
		i = skipString(doc, i)
		key := memberName(doc[k:i])
		i = skipSpace(doc, skipSpace(doc, i)+1) // the colon
		v := i
		i = skipValue(doc, i)
		switch key {
		case keyCourseID:
			n, err := strconv.ParseInt(string(doc[v:i]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: course_id %s", ErrNotClassDocument, doc[v:i])
			}
			d.courseID, seenCourse = n, true
		case keyRegistrationID, keyPrevTestDate:
			d.values = append(d.values, span{v, i, key})
		}
	}
	if !seenCourse || !d.has(keyRegistrationID) || !d.has(keyPrevTestDate) {
		return nil, fmt.Errorf("%w: it lacks course_id, registration_id or prev_reg_test_date", ErrNotClassDocument)
	}
	return d, nil
}

func (d *Document) has(key string) bool {
	for _, s := range d.values {
		if s.key == key {
			return true
		}
	}
	return false
}

// The scanners below walk JSON that json.Valid has accepted, so they need not check it.

// skipSpace returns the index of the first byte at or after i that is not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just after the string that begins at i.
func skipString(b []byte, i int) int {
	for i++; b[i] != '"'; i++ {
		if b[i] == '\\' {
			i++ // the escaped byte, which may be a quote
		}
	}
	return i + 1
}

// skipValue returns the index just after the value that begins at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) && !endsLiteral(b[i]) { // a number, true, false or null
		i++
	}
	return i
}

// endsLiteral reports whether c ends a number or a literal.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// memberName is the name a quoted member name stands for: the text between the quotes,
// or, when it holds escapes, what they decode to.
func memberName(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	_ = json.Unmarshal(quoted, &s) // a valid JSON string
	return s
}

// CourseID is the document's course_id.
func (d *Document) CourseID() int64 { return d.courseID }

// AppendWith appends the document to buf with f in place of its two per-student values,
// every other byte as the snapshot holds it. With empty Fields it appends the document
// unchanged.
func (d *Document) AppendWith(buf []byte, f Fields) []byte {
	at := 0
	for _, s := range d.values {
		buf = append(buf, d.doc[at:s.start]...)
		switch {
		case s.key == keyRegistrationID && f.RegistrationID != nil:
			buf = strconv.AppendInt(buf, *f.RegistrationID, 10)
		case s.key == keyPrevTestDate && f.PrevTestDate != nil:
			buf = append(buf, '"')
			buf = f.PrevTestDate.AppendFormat(buf, time.DateOnly)
			buf = append(buf, '"')
		default:
			buf = append(buf, "null"...)
		}
		at = s.end
	}
	return append(buf, d.doc[at:]...)
}
