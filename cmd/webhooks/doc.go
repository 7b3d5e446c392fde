// Package webhooks holds the end-to-end tests of the webhooks: the real builder serve and
// edge binaries, PostgreSQL, Redis and receivers on loopback that verify every delivery
// with the Standard Webhooks reference library and read the changed documents through
// the edges the moment a delivery arrives (D40-D43).
//
// The tests need the services that make test starts (see scripts/testkit). The
// package has no code of its own: everything is in its _test.go files.
package webhooks
