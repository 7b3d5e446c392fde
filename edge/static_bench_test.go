package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// discardWriter is a ResponseWriter that keeps only the status, so that the benchmark
// measures the edge and not a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }

// BenchmarkStaticRead is one authenticated read of a static document through every
// middleware, as nginx would serve it from a file: a class document in gzip, and a course
// list restricted by type. Besides ns/op it reports cpu-ns/op, the process's CPU time per
// read (the garbage collector's included), which a busy machine skews much less.
func BenchmarkStaticRead(b *testing.B) {
	st := openStore(b, testkit.NewLocalStore(b))
	publish(b, st, fixtureA())
	ts := newTestServer(b, st, testConfig())
	for _, bb := range []struct{ name, target, ae string }{
		{"class-gzip", "/api/v2/public/class/7", "gzip, deflate, br"},
		{"courses-type", "/api/v2/public/courses?type[]=Online&type[]=Blended", ""},
	} {
		b.Run(bb.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", bb.target, nil)
			req.Header.Set("Authorization", "Bearer "+ts.token)
			if bb.ae != "" {
				req.Header.Set("Accept-Encoding", bb.ae)
			}
			h := ts.Handler()
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				w := &discardWriter{h: http.Header{}}
				h.ServeHTTP(w, req)
			}
			// CPU time, unlike ns/op, hardly moves when other processes share the machine.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
