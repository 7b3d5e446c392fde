// Package faults holds the fault-injection tests of the catalogue's reliability guarantees
// (issue 4). It has no code of its own: its tests run the real builder and edge binaries
// (cmd/internal/cmdtest) against real PostgreSQL and MinIO, break things under them, and
// check what clients and the store see.
package faults
