//go:build !linux

package cork

import "syscall"

// setCork does nothing where there is no TCP_CORK: the response leaves as net/http writes it.
func setCork(syscall.RawConn, bool) {}
