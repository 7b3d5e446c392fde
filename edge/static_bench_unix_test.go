//go:build unix

package edge

import "syscall"

// processCPU returns the user and system CPU time of this process so far, in nanoseconds.
func processCPU() int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
