package publish

import (
	"context"
	"fmt"
	"testing"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
)

// BenchmarkPublishChanges publishes one changed class document over a snapshot of 100,000
// documents into a local folder, with Keep snapshots kept and known (Own) as builder serve
// keeps them: the publishing part of an incremental build.
func BenchmarkPublishChanges(b *testing.B) {
	ctx := context.Background()
	st := store.NewLocal(b.TempDir())
	docs := make(map[string][]byte, 100_000)
	for i := range 100_000 {
		docs[snapshot.ClassRoute(int64(i))] = fmt.Appendf(nil, `{"course_id":%d,"cost":%d,"padding":"%0300d"}`, i%2000, i, i)
	}
	p := &Publisher{Store: st, Keep: 10, MaxShrink: 0.5, Own: map[string]*snapshot.Manifest{}}
	res, err := p.Publish(ctx, docs, meta(2000, 100_000), false)
	if err != nil {
		b.Fatal(err)
	}
	cur := res.Manifest
	b.ResetTimer()
	for i := range b.N {
		changed := map[string][]byte{snapshot.ClassRoute(int64(i % 100_000)): fmt.Appendf(nil, `{"changed":%d}`, i)}
		res, err := p.PublishChanges(ctx, cur, changed, nil, meta(2000, 100_000), false)
		if err != nil {
			b.Fatal(err)
		}
		cur = res.Manifest
		p.Own[cur.ID] = cur
		if len(p.Own) > p.Keep {
			oldest := ""
			for id := range p.Own {
				if oldest == "" || id < oldest {
					oldest = id
				}
			}
			delete(p.Own, oldest)
		}
	}
}
