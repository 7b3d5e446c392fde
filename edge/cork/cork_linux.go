package cork

import "syscall"

// setCork sets TCP_CORK. An error means the connection is closed or closing, which its
// next read or write reports; a cork left on is sent by the kernel within 200 ms anyway.
func setCork(rc syscall.RawConn, on bool) {
	v := 0
	if on {
		v = 1
	}
	_ = rc.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, v)
	})
}
