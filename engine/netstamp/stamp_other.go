//go:build !linux

package netstamp

import (
	"net"
	"time"
)

// platform stamps a read with the moment it returned.
type platform struct{}

func (pl *platform) init(c net.Conn, _ bool) { ackEverySegment(c) }

func (pl *platform) read(c net.Conn, p []byte) (int, time.Time, bool, error) {
	n, err := c.Read(p)
	return n, time.Now(), false, err
}

func (pl *platform) sent() (time.Time, bool) { return time.Time{}, false }

func (pl *platform) closing()      {}
func (pl *platform) userDeadline() {}
