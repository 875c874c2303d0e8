//go:build !linux

package chtest

import "syscall"

// sysProcAttr has nothing to add outside Linux (no parent-death signal).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// Pause and Resume are Linux's (SIGSTOP, SIGCONT): elsewhere they fail.
var stopSignal, continueSignal = unsupported{}, unsupported{}

type unsupported struct{}

func (unsupported) String() string { return "unsupported" }
func (unsupported) Signal()        {}
