// Package cmdtest runs the real binaries, cmd/builder and cmd/edge, against real services, for
// the end-to-end tests of cmd/e2e and for any test that wants a whole installation.
//
//	builder, edge := cmdtest.Binaries(t)  // go build, once per test process
//	env := cmdtest.NewEnv(t, st)          // fresh database (builder migrate ran), store st
//	env.Extra["CATALOGUE_TIMEZONE"] = "Europe/Berlin"
//	env.Exec(t, "INSERT INTO courses ...")
//	id := env.Run(t)                      // builder run; returns the snapshot id
//	token := env.Token(t, "kiosk")        // builder token create; NewToken also gives the id
//	out := env.MustBuilder(t, "status")   // any command; Builder returns the error instead
//	d := env.StartEdge(t, map[string]string{"CATALOGUE_EDGE_RATE_LIMIT": "5"})
//	d.WaitSnapshot(t, id, 10*time.Second) // until /readyz names the snapshot
//	r := d.Get(t, "/api/v2/public/courses", token, "Accept-Encoding", "gzip")
//	r.StatusCode, r.Header, r.Data        // the body is already read; r.JSON(t) decodes it
//	err := d.Stop(t)                      // SIGTERM, then how it exited (nil for 0)
//
// The binaries are built into a temporary folder, with -race when the tests run with it
// (a data race in a binary then makes it exit 66). A package that uses Binaries (directly
// or through NewEnv) removes the folder when its tests end with
//
//	func TestMain(m *testing.M) { cmdtest.Main(m) }
//
// The build is of the working tree as it is on disk, like go test itself.
//
// Env hands the binaries an environment of CATALOGUE_* variables: every CATALOGUE_* variable
// of the test process is dropped first (so a developer's shell cannot change a test), then
// the database and store of the Env and its Extra are added. Other variables, such as the
// AWS_* credentials of the test MinIO, pass through unchanged. StartEdge adds its own extra
// variables for that edge only.
//
// An edge started by StartEdge listens on 127.0.0.1:0; the harness reads the address from
// its JSON "listening" log line. When the test ends it is stopped with SIGTERM, and the test
// fails if it does not then exit 0, unless the test stopped it itself (Stop, or Signal and
// Wait), in which case the test checks how it ended.
//
// Databases and stores come from scripts/testkit: without the services the tests skip,
// and under CATALOGUE_TEST_REQUIRE=1 (make test) they fail.
//
// The HTTP client of an Edge never follows redirects and never decompresses: a test sees
// Content-Encoding and the exact bytes sent, and asks for gzip with an Accept-Encoding header.
package cmdtest
