package serve

import (
	"context"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/bollhav/bollhav/engine/tick"
)

// keepAliveEvery is how often a session asks its client for a keepalive
// reply; transportIdle, how long a connection may pass with no traffic at
// all. The keepalives are traffic, so a live session's connection is never
// idle by that measure, however quiet its screen.
const (
	keepAliveEvery = 30 * time.Second
	transportIdle  = 3 * keepAliveEvery
)

// keepAlive asks the client on conn for a keepalive reply every interval,
// as OpenSSH's ClientAliveInterval does, until ctx ends. A client that
// has not answered within an interval (its network is gone: writes to it
// still succeed until the kernel gives up) has its connection closed,
// which ends its sessions and their UIs, so they stop holding runs and
// store connections.
func keepAlive(ctx context.Context, conn gossh.Conn, interval time.Duration) {
	tick.Every(ctx, interval, func() bool {
		answered := make(chan error, 1)
		go func() {
			_, _, err := conn.SendRequest("keepalive@openssh.com", true, nil)
			answered <- err
		}()
		select {
		case <-ctx.Done():
			return false
		case err := <-answered:
			if err == nil {
				return true
			}
		case <-time.After(interval):
		}
		_ = conn.Close()
		return false
	})
}
