package edge

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/trainingco/catalogue/builder/buildertest"
)

// TestFeedGzipPageMadeOnce: a full page of the classes feed is compressed once per snapshot
// and ETag, then sent as it is: a harvester's second request for the same page, or another
// partner's, costs no compression (issue 20: the edge against nginx serving the same bytes
// from a file). Seen failing when every request compressed its page (about 1 MB allocated).
func TestFeedGzipPageMadeOnce(t *testing.T) {
	f := fixture{id: "big-feed", docs: map[string]string{}, modified: map[string]int64{}}
	for id := 1; id <= FeedPageSize; id++ {
		route := fmt.Sprintf("/public/class/%d", id)
		f.docs[route] = fmt.Sprintf(`{"course_id":1,"schedule":"%s"}`, strings.Repeat(fmt.Sprint(id), 100))
		f.modified[route] = int64(id)
	}
	ts := startOn(t, openStore(t, buildertest.NewLocalStore(t)), f)
	gz := map[string]string{"Accept-Encoding": "gzip"}
	first := ts.get(http.MethodGet, "/api/v2/public/feeds/classes", gz, "Content-Encoding", "Etag")
	if first.Status != http.StatusOK || first.Headers["Content-Encoding"] != "gzip" {
		t.Fatalf("first gzip page: %+v", first.Headers)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	again := ts.get(http.MethodGet, "/api/v2/public/feeds/classes", gz, "Content-Encoding", "Etag")
	runtime.ReadMemStats(&after)
	if again.Body != first.Body || again.Headers["Etag"] != first.Headers["Etag"] {
		t.Errorf("second gzip page differs from the first: ETag %q, was %q", again.Headers["Etag"], first.Headers["Etag"])
	}
	// The response recorder keeps a copy of the body (about 30 KB compressed); a page made
	// again allocates its identity body (over 500 KB) and the compressor's state besides.
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
		t.Errorf("the second request for the same gzip page allocated %d KB, want at most 256 KB: the page was made again", n>>10)
	}
}
