//go:build !unix

package executor

import (
	"os"
	"os/exec"
	"time"
)

// Without process groups only the command itself can be stopped, and its
// children may outlive it; bollhav's supported platforms are unix.

func setProcessGroup(*exec.Cmd) {}

// terminateGroup kills the command, which is still running when it is called.
func terminateGroup(pid int, _ time.Duration) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// killGroup is called after the command exited: with no group there is
// nothing left to find, and killing by a reaped pid could hit a stranger.
func killGroup(int) {}
