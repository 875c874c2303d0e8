package chtest

import "syscall"

// sysProcAttr makes the kernel stop the server when the process that
// started it dies, so a crashed test binary leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// The signals that freeze and thaw a server (Pause, Resume).
var stopSignal, continueSignal = syscall.SIGSTOP, syscall.SIGCONT
