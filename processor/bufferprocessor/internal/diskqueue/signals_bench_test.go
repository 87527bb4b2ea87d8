package diskqueue

import (
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkSignalLogs compares the two designs for the buffer's three signals: one log each
// (what the buffer does) and one log the three signals' writers share (records typed), with the
// writers of three signals appending 64 KiB records concurrently. With fsync always, one shared
// log groups the three writers' fsyncs into one; three logs fsync each on its own.
func BenchmarkSignalLogs(b *testing.B) {
	for _, fsync := range []FsyncPolicy{FsyncAlways, FsyncInterval} {
		for _, logs := range []int{1, 3} {
			b.Run(fmt.Sprintf("fsync=%v/logs=%d", fsyncName(fsync), logs), func(b *testing.B) {
				benchSignalLogs(b, fsync, logs)
			})
		}
	}
}

func fsyncName(p FsyncPolicy) string {
	if p == FsyncAlways {
		return "always"
	}
	return "interval"
}

func benchSignalLogs(b *testing.B, fsync FsyncPolicy, logs int) {
	const writers = 3 // one per signal
	dir := b.TempDir()
	ls := make([]*Log, logs)
	for i := range ls {
		l, _, err := Open(Options{Dir: filepath.Join(dir, strconv.Itoa(i)), CapacityBytes: 8 << 30, Fsync: fsync, FsyncInterval: 100 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		ls[i] = l
	}
	payload := make([]byte, 64<<10)
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/writers + 1
	for w := range writers {
		l := ls[w%logs]
		wg.Go(func() {
			for range per {
				pos, _, err := l.Append(payload, 1, time.Now(), NoClaim)
				if err != nil {
					b.Error(err)
					return
				}
				if err := l.Ack([]Pos{pos}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	for _, l := range ls {
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
