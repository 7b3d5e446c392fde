//go:build unix

package store

import (
	"os"
	"syscall"
)

// ownerOf returns the uid owning path, and false when it cannot be read.
func ownerOf(path string) (int, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
