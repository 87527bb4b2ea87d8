//go:build linux

package bufferprocessor // import "github.com/tracegate/tracegate/processor/bufferprocessor"

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lowerThreadPriority locks the calling goroutine to its OS thread and raises that thread's nice
// value by steps (at most to 19), relative to the priority the process runs at. On Linux,
// PRIO_PROCESS with a thread id changes one thread, not the process. The caller must never unlock
// the thread: a goroutine that exits locked takes its thread with it.
func lowerThreadPriority(steps int) error {
	runtime.LockOSThread()
	tid := unix.Gettid()
	// The raw system call answers 20 - nice (1..40), so that no answer looks like an error.
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return err
	}
	return unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-prio+steps, 19))
}
