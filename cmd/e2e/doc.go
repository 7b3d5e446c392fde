// Package e2e holds the end-to-end tests of the Public Catalogue API. They run the real
// binaries, as an operator would: builder migrate on a fresh database, a small hand-written
// catalogue, builder run, builder token create, then the edge on a free port. They check
// every endpoint and every decision of spec/decisions.md against bodies written out by hand
// from the specification, once with a local-folder store and once with MinIO.
//
// The tests need PostgreSQL and MinIO (see scripts/testkit); make test starts both.
// The package has no code of its own: everything is in its _test.go files.
package e2e
