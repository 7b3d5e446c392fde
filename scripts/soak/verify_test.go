package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// mapStore is a store of fixed objects.
type mapStore map[string][]byte

func (s mapStore) Get(_ context.Context, key string) ([]byte, error) {
	if b, ok := s[key]; ok {
		return b, nil
	}
	return nil, store.ErrNotFound
}

func TestCheck(t *testing.T) {
	// Two snapshots whose course lists differ and whose class document is the same.
	old, cur := []byte(`{"data":[{"id":1}]}`), []byte(`{"data":[{"id":1},{"id":2}]}`)
	class := []byte(`{"course_id":1}`)
	st := mapStore{}
	for id, list := range map[string][]byte{"S1": old, "S2": cur} {
		m := snapshot.Manifest{ID: id, Documents: map[string]snapshot.Entry{
			"/public/courses": {Hash: snapshot.Hash(list)},
			"/public/class/1": {Hash: snapshot.Hash(class)},
		}}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		st[snapshot.ManifestKey(id)] = b
	}
	hCur, hOld := snapshot.Hash(cur), snapshot.Hash(old)
	list := target{kind: kindStatic, method: "GET", route: "/public/courses"}
	gzList := list
	gzList.gzip = true
	head := target{kind: kindHead, method: "HEAD", route: "/public/class/1"}
	cond := func(hash string) target {
		return target{kind: kindConditional, method: "GET", route: "/public/courses", inm: etag{tag: `"` + hash + `"`, hash: hash}}
	}
	search := target{kind: kindSearch, method: "GET", limit: 2, course: "7"}
	missing := target{kind: kindNotFound, method: "GET"}

	tests := []struct {
		name   string
		t      target
		status int
		header map[string]string // besides X-RateLimit-Limit: 60 and X-RateLimit-Remaining: 5
		body   []byte
		want   map[string]int // failures by kind
	}{
		{"the current list", list, 200, map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hCur + `"`}, cur, nil},
		{"the current list compressed", gzList, 200,
			map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hCur + `-gz"`, "Content-Encoding": "gzip"}, gz(t, cur), nil},
		{"the old list named as the current snapshot", list, 200,
			map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hCur + `"`}, old, map[string]int{failMixed: 1}},
		{"the current list under the old snapshot's tag", list, 200,
			map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hOld + `"`}, cur, map[string]int{failMixed: 1}},
		{"the identity tag on a compressed body", gzList, 200,
			map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hCur + `"`, "Content-Encoding": "gzip"}, gz(t, cur), map[string]int{failMixed: 1}},
		{"a compressed body not asked for", list, 200,
			map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hCur + `"`, "Content-Encoding": "gzip"}, gz(t, cur), map[string]int{failMalformed: 1}},
		{"no snapshot named", list, 200, map[string]string{"ETag": `"` + hCur + `"`}, cur, map[string]int{failMalformed: 1}},
		{"a snapshot not in the store", list, 200, map[string]string{"X-Catalogue-Snapshot": "S9", "ETag": `"` + hCur + `"`}, cur, map[string]int{failUnverified: 1}},
		{"HEAD of a class", head, 200, map[string]string{"X-Catalogue-Snapshot": "S1", "ETag": `"` + snapshot.Hash(class) + `"`}, nil, nil},
		{"304 for the tag of the snapshot named", cond(hCur), 304, map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hCur + `"`}, nil, nil},
		{"304 for a tag the snapshot named no longer has", cond(hOld), 304,
			map[string]string{"X-Catalogue-Snapshot": "S2", "ETag": `"` + hOld + `"`}, nil, map[string]int{failMixed: 1}},
		{"a search page", search, 200, nil, []byte(`{"data":[{"id":"3","course_id":"7"}],"total":1,"last_page":1}`), nil},
		{"a search page of another course", search, 200, nil, []byte(`{"data":[{"id":"3","course_id":"8"}],"total":1,"last_page":1}`), map[string]int{failMalformed: 1}},
		{"a search page without total", search, 200, nil, []byte(`{"data":[]}`), map[string]int{failMalformed: 1}},
		{"a search that failed", search, 503, nil, []byte(`{"message":"x"}`), map[string]int{fail5xx: 1}},
		{"not found", missing, 404, nil, []byte(`{"message":"Class not found."}`), nil},
		{"a 404 for a document", list, 404, nil, []byte(`{"message":"Not Found."}`), map[string]int{failStatus: 1}},
		{"over the limit", list, 429, map[string]string{"Retry-After": "3", "X-RateLimit-Reset": "1"}, []byte(`{"message":"Too Many Attempts."}`), nil},
		{"over the limit without Retry-After", list, 429, nil, []byte(`{"message":"Too Many Attempts."}`), map[string]int{failMalformed: 1}},
	}
	for _, tt := range tests {
		w := &worker{window: time.Minute, ms: newManifests(st), fails: &failures{counts: map[string]int{}}, etags: map[string]etag{}}
		res := &http.Response{StatusCode: tt.status, Header: http.Header{}}
		res.Header.Set("X-RateLimit-Limit", "60")
		res.Header.Set("X-RateLimit-Remaining", "5")
		for k, v := range tt.header {
			res.Header.Set(k, v)
		}
		w.check(answer{t: tt.t, res: res, body: tt.body, limit: 60})
		want := tt.want
		if want == nil {
			want = map[string]int{}
		}
		if diff := cmp.Diff(want, w.fails.counts); diff != "" {
			t.Errorf("check(%q) mismatch (-want +got):\n%s%q", tt.name, diff, w.fails.first)
		}
	}
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
