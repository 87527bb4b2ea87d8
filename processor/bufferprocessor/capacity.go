package bufferprocessor

import (
	"path/filepath"

	"github.com/tracegate/tracegate/internal/sharedcomponent"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// storageCapacities holds the capacities the buffers of one process share: the traces, logs and
// metrics pipelines' buffers with one storage.directory keep their logs in it (signal.subdir),
// and storage.capacity_mib bounds the three together, as an operator sizing the volume expects.
var storageCapacities sharedcomponent.Registry[capacityKey, *diskqueue.SharedCapacity]

// capacityKey: buffers share a capacity when they name the same directory and the same size.
type capacityKey struct {
	dir   string
	bytes int64
}

// acquireCapacity returns the capacity of bytes shared by the buffers under dir, and the function
// that gives it back at shutdown.
func acquireCapacity(dir string, bytes int64) (*diskqueue.SharedCapacity, func()) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	k := capacityKey{dir: filepath.Clean(dir), bytes: bytes}
	return storageCapacities.Share(k, func() *diskqueue.SharedCapacity { return diskqueue.NewSharedCapacity(bytes) })
}
