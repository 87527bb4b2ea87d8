//go:build !linux

package bufferprocessor // import "github.com/tracegate/tracegate/processor/bufferprocessor"

import "errors"

// lowerThreadPriority is Linux-only: elsewhere one thread's priority cannot be set apart from the
// process's through a portable call.
func lowerThreadPriority(int) error {
	return errors.New("worker_nice is supported on Linux only")
}
