// Package cmdtest runs the real binaries, cmd/builder and cmd/edge, against real services, for
// the end-to-end tests of cmd/e2e and for any test that wants a whole installation.
//
//	builder, edge := cmdtest.Binaries(t)  // go build, once per test process
//	env := cmdtest.NewEnv(t, st)          // fresh database (builder migrate ran), store st
//	env.Exec(t, "INSERT INTO courses ...")
//	id := env.Run(t)                      // builder run; returns the snapshot id
//	token := env.Token(t, "kiosk")        // builder token create
//	d := env.StartEdge(t, map[string]string{"CATALOGUE_EDGE_RATE_LIMIT": "5"})
//	r := d.Get(t, "/api/v2/public/courses", token, "Accept-Encoding", "gzip")
//	r.StatusCode, r.Header, r.Data        // the body is already read
//
// The binaries are built into a temporary folder; a package that uses Binaries (directly or
// through NewEnv) should remove it when its tests end:
//
//	func TestMain(m *testing.M) { cmdtest.Main(m) }
//
// Env hands the binaries an environment of CATALOGUE_* variables: every CATALOGUE_* variable
// of the test process is dropped first (so a developer's shell cannot change a test), then
// the database and store of the Env and its Extra are added. Other variables, such as the
// AWS_* credentials of the test MinIO, pass through unchanged.
//
// Databases and stores come from builder/buildertest: without the services the tests skip,
// and under CATALOGUE_TEST_REQUIRE=1 (make test) they fail.
//
// The HTTP client of an Edge never follows redirects and never decompresses: a test sees
// Content-Encoding and the exact bytes sent, and asks for gzip with an Accept-Encoding header.
package cmdtest
