//go:build unix

package executor

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// setProcessGroup starts the command as the leader of a new process group,
// so that one signal reaches it and everything it spawned: killing only the
// leader would leave a `sleep` or a loader it started running, holding
// locks and the output pipes.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// terminateGroup asks the group to stop with SIGTERM, waits up to grace for
// all of it to exit, then sends SIGKILL.
func terminateGroup(pgid int, grace time.Duration) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		<-tick.C
		if !groupAlive(pgid) {
			return
		}
	}
	killGroup(pgid)
}

// killGroup sends SIGKILL to the group. A group whose members are all gone
// answers ESRCH, which is the outcome wanted. The kernel does not reuse a
// process group id while any member lives, so this cannot hit a stranger's
// group; once every member is reaped the id could in theory be recycled in
// the microseconds between Wait and this call, a risk accepted here.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// groupAlive reports whether any process of the group still runs. Zombies
// do not count: they run nothing, and an orphan's zombie lingers until init
// reaps it, which some inits (container and microVM ones) do only every
// second or so — waiting for them would stretch every kill to the grace.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	live, ok := liveGroupMember(pgid)
	return live || !ok
}

// liveGroupMember scans /proc for a process of the group that is not a
// zombie; ok is false where there is no /proc to scan.
func liveGroupMember(pgid int) (live, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything but
		// ends at the last ')'.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(raw[i+1:])
		if len(f) >= 3 && string(f[2]) == want && string(f[0]) != "Z" && string(f[0]) != "X" {
			return true, true
		}
	}
	return false, true
}
