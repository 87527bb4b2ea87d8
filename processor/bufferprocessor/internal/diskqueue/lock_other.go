//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package diskqueue // import "github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"

import (
	"errors"
	"os"
)

// errLocked reports a directory already held by another buffer.
var errLocked = errors.New("directory is in use by another buffer")

// lockDir refuses: without flock the buffer cannot prove it owns the directory.
func lockDir(string) (*os.File, error) {
	return nil, errors.New("storage needs flock, which this operating system lacks")
}

func unlockDir(f *os.File) error { return f.Close() }
