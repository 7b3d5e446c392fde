//go:build linux

package docstore

import "syscall"

// mapMemory maps size bytes of private anonymous memory: zeroed, and resident only once
// written, so the unused end of a chunk costs nothing.
func mapMemory(size int) ([]byte, error) {
	return syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapMemory returns a mapping to the OS. It fails only for a slice mapMemory did not
// return, which nothing passes, so the error is dropped: a cleanup has nobody to tell.
func unmapMemory(mem []byte) { _ = syscall.Munmap(mem) }

// protectMemory makes a mapping read-only.
func protectMemory(mem []byte) error { return syscall.Mprotect(mem, syscall.PROT_READ) }
