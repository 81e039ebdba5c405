//go:build windows

package netstamp

import (
	"net"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sioTCPSetAckFrequency is mstcpip.h's SIO_TCP_SET_ACK_FREQUENCY.
const sioTCPSetAckFrequency = 0x98000017

// ackEverySegment asks Windows to acknowledge every segment at once, for
// the life of the connection. Windows acknowledges every second segment
// or after 200 ms; a server with Nagle's algorithm on (llama-server) holds
// a small chunk until the one before is acknowledged, so its first token
// after the headers could wait up to 200 ms (Linux's quickAck in
// stamp_linux.go is the same remedy). Windows versions without the
// control code refuse it, and the connection reads as before.
func ackEverySegment(c net.Conn) {
	raw, ok := rawOf(c)
	if !ok {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		freq := uint32(1)
		var n uint32
		_ = windows.WSAIoctl(windows.Handle(fd), sioTCPSetAckFrequency, (*byte)(unsafe.Pointer(&freq)), 4, nil, 0, &n, nil, 0)
	})
}
