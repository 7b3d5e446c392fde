//go:build !linux

package docstore

// The edge is deployed on Linux; elsewhere (a developer's laptop) documents live in the Go
// heap, which works the same and only costs more memory under load.

func mapMemory(size int) ([]byte, error) { return make([]byte, size), nil }

func unmapMemory([]byte) {}

func protectMemory([]byte) error { return nil }
