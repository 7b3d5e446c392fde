//go:build !unix

package builder

import "time"

// cpuTime is not measured on this system: builds report 0 CPU time.
func cpuTime() time.Duration { return 0 }
