package bufferprocessor

import (
	"path/filepath"
	"sync"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// storageCapacities holds the capacities the buffers of one process share: the traces, logs and
// metrics pipelines' buffers with one storage.directory keep their logs in it (signal.subdir),
// and storage.capacity_mib bounds the three together, as an operator sizing the volume expects.
var storageCapacities = struct {
	mu sync.Mutex
	m  map[capacityKey]*sharedCapacity
}{m: map[capacityKey]*sharedCapacity{}}

// capacityKey: buffers share a capacity when they name the same directory and the same size.
type capacityKey struct {
	dir   string
	bytes int64
}

type sharedCapacity struct {
	c     *diskqueue.SharedCapacity
	users int
}

// acquireCapacity returns the capacity of bytes shared by the buffers under dir, and the function
// that gives it back at shutdown.
func acquireCapacity(dir string, bytes int64) (*diskqueue.SharedCapacity, func()) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	k := capacityKey{dir: filepath.Clean(dir), bytes: bytes}
	storageCapacities.mu.Lock()
	defer storageCapacities.mu.Unlock()
	s := storageCapacities.m[k]
	if s == nil {
		s = &sharedCapacity{c: diskqueue.NewSharedCapacity(bytes)}
		storageCapacities.m[k] = s
	}
	s.users++
	var once sync.Once
	return s.c, func() {
		once.Do(func() {
			storageCapacities.mu.Lock()
			defer storageCapacities.mu.Unlock()
			s.users--
			if s.users == 0 {
				delete(storageCapacities.m, k)
			}
		})
	}
}
