//go:build unix && !linux

package executor

import "syscall"

// dieWithParent has no portable equivalent outside Linux: there, a killed
// worker's command runs on until it exits by itself.
func dieWithParent(*syscall.SysProcAttr) {}
