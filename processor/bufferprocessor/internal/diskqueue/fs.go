package diskqueue

import (
	"io"
	"os"
)

// File is the part of *os.File the log uses. It exists so tests can inject write failures such as
// ENOSPC without filling a real disk.
type File interface {
	io.ReaderAt
	io.Writer
	io.Closer
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Fd() uintptr
}

// FS opens and removes files. OS is the real implementation.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
}

// OS is the operating system's file system.
type OS struct{}

// OpenFile opens a file with os.OpenFile.
func (OS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm) //nolint:gosec // paths are built from the configured directory
}

// Remove removes a file with os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }
