//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package diskqueue

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errLocked reports a directory already held by another buffer (in this or another process).
var errLocked = errors.New("directory is in use by another buffer")

// lockDir takes an exclusive, non-blocking flock on dir/LOCK. The kernel releases it when the
// process dies, so a SIGKILL never leaves a stale lock behind (unlike a PID file).
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600) //nolint:gosec // path built from the configured directory
	if err != nil {
		return nil, fmt.Errorf("open lock file %q: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %q is locked", errLocked, path)
		}
		return nil, fmt.Errorf("lock %q: %w", path, err)
	}
	return f, nil
}

// unlockDir releases the lock taken by lockDir.
func unlockDir(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return errors.Join(err, f.Close())
}
