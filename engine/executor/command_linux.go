//go:build linux

package executor

import "syscall"

// dieWithParent makes the kernel SIGKILL the command when the worker that
// started it dies — even by SIGKILL, which runs no cleanup of ours — so a
// killed worker's unit is not still being written by an orphan when its
// lease expires and another worker runs it again. It reaches the command
// itself; what the command started is ended by the process-group kill of
// the next attempt's executor only if it shares the group, so commands
// should exec their loader rather than background it.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
