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

// Document is a class detail document split into its top-level members, in order, each
// value's bytes as the snapshot holds them.
type Document struct {
	members  []member
	courseID int64
	trailer  []byte // what follows the object (the encoder's newline)
}

type member struct {
	key    string
	quoted []byte // key as JSON
	value  json.RawMessage
}

// Parse splits doc, the identity body of a class document of the snapshot. The Document
// keeps no reference to doc.
func Parse(doc []byte) (*Document, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%w: no object", ErrNotClassDocument)
	}
	d := &Document{}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotClassDocument, err)
		}
		key, _ := t.(string) // an object's tokens alternate: key, value
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: member %q: %w", ErrNotClassDocument, key, err)
		}
		quoted, _ := json.Marshal(key) // a string always encodes
		d.members = append(d.members, member{key, quoted, v})
		seen[key] = true
		if key == keyCourseID {
			if d.courseID, err = strconv.ParseInt(string(v), 10, 64); err != nil {
				return nil, fmt.Errorf("%w: course_id %s", ErrNotClassDocument, v)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotClassDocument, err)
	}
	if !seen[keyCourseID] || !seen[keyRegistrationID] || !seen[keyPrevTestDate] {
		return nil, fmt.Errorf("%w: it lacks course_id, registration_id or prev_reg_test_date", ErrNotClassDocument)
	}
	rest := doc[dec.InputOffset():]
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("%w: data after the object", ErrNotClassDocument)
	}
	// A copy, like every value the decoder returned: nothing of doc is kept, so its bytes
	// may go once Parse returns.
	d.trailer = bytes.Clone(rest)
	return d, nil
}

// CourseID is the document's course_id.
func (d *Document) CourseID() int64 { return d.courseID }

// AppendWith appends the document to buf with f in place of its two per-student values,
// every other member byte for byte as the snapshot holds it, in the same order. With empty
// Fields it appends the document unchanged.
func (d *Document) AppendWith(buf []byte, f Fields) []byte {
	buf = append(buf, '{')
	for i, m := range d.members {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, m.quoted...)
		buf = append(buf, ':')
		switch {
		case m.key == keyRegistrationID && f.RegistrationID != nil:
			buf = strconv.AppendInt(buf, *f.RegistrationID, 10)
		case m.key == keyPrevTestDate && f.PrevTestDate != nil:
			buf = append(buf, '"')
			buf = f.PrevTestDate.AppendFormat(buf, time.DateOnly)
			buf = append(buf, '"')
		case m.key == keyRegistrationID || m.key == keyPrevTestDate:
			buf = append(buf, "null"...)
		default:
			buf = append(buf, m.value...)
		}
	}
	buf = append(buf, '}')
	return append(buf, d.trailer...)
}
