// Package freshness holds the end-to-end tests of freshness: the real builder serve and
// edge binaries against PostgreSQL, its streaming standby as the replica, and a local
// folder or MinIO as the store. A change committed on the primary must reach the edge, and
// a serve stopped with SIGTERM at any moment must leave a whole snapshot.
//
// The tests need the services that make test starts (see scripts/testkit). The
// package has no code of its own: everything is in its _test.go files.
package freshness
