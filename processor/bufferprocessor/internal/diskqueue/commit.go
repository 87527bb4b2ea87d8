package diskqueue

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"
)

// groupCommit is the fsync bookkeeping, under Log.mu. Writes are numbered in order (writeSeq); an
// fsync covers every write numbered up to writeSeq when it starts.
type groupCommit struct {
	writeSeq, syncedSeq uint64
	// attemptedSeq is the highest write covered by any fsync so far, successful or not.
	attemptedSeq uint64
	// failed are the writes whose first fsync failed, most recent last (see failedFor).
	failed []failedSync
	// writing is 1 while an append is between its bookkeeping and its write's completion.
	writing uint64
	// forgottenTo: failures up to this write were forgotten (maxFailedSyncs); writes up to it
	// are all reported as failed, the durable ones among them too.
	forgottenTo  uint64
	syncing      bool // an fsync runs (mu released): one at a time
	gathering    bool // a group commit's leader lets the other appends write first (waitSynced)
	dirDirty     bool // a file was created since the last fsync of the directory
	acksSyncedAt time.Time
}

// syncScope is what one fsync round covers.
type syncScope uint8

const (
	syncRecords        syncScope = iota // the dirty segment files
	syncRecordsAndAcks                  // and the dirty ack files after them
)

// failedSync is a failed fsync and the writes it was the first to cover: (from, to].
type failedSync struct {
	from, to uint64
	err      error
}

// maxFailedSyncs bounds the failures remembered. Consecutive failures merge into one range; past
// the bound the oldest range is forgotten and its writes, with all before them, count as failed.
const maxFailedSyncs = 64

// waitSynced blocks until a sync covering write seq completed. The first waiter leads: it runs the
// fsync for everyone who wrote before it started (group commit).
//
// Before its fsync the leader yields once (gathering): appends that are ready to run write first
// and wait for the same fsync. Without it a group held one write when the collector has a single
// P (GOMAXPROCS=1, one core): the fsync syscall keeps its P, so no other append runs until it
// returns, and every batch paid an fsync of its own (measured in docs/benchmarks.md). When
// nothing else is runnable the yield returns at once.
func (l *Log) waitSynced(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &l.commit
	gathered := false
	for {
		if err := c.failedFor(seq); err != nil {
			return err
		}
		if c.syncedSeq >= seq {
			return nil
		}
		if c.syncing || c.gathering {
			l.cond.Wait()
			continue
		}
		if !gathered {
			gathered = true
			l.gatherLocked(seq)
			continue
		}
		// Every client of this group waits for this fsync, and on ext4 each file synced costs a
		// journal commit of its own. Ack entries only say what was delivered: one lost to a power
		// failure brings a duplicate, never a loss, so they ride along at most once a second.
		scope := syncRecords
		if time.Since(c.acksSyncedAt) >= l.opts.AckSyncInterval {
			scope = syncRecordsAndAcks
		}
		_ = l.syncLocked(scope) // its failure is in c.failed
	}
}

// gatherLocked is the leader's yield before its fsync (see waitSynced). Caller holds mu; it is
// released during the yield.
func (l *Log) gatherLocked(seq uint64) {
	c := &l.commit
	c.gathering = true
	l.mu.Unlock()
	runtime.Gosched()
	l.mu.Lock()
	c.gathering = false
	if c.syncing || c.syncedSeq >= seq || c.failedFor(seq) != nil {
		// This leader will not run the fsync (another one ran or runs meanwhile: Sync, the ack
		// loop): the appends that came while it yielded must not wait for it.
		l.cond.Broadcast()
	}
}

// failedFor returns the error of the fsync that first covered write seq, if it failed. Linux may
// drop the dirty pages of a failed fsync and report the next fsync of the file as a success, so
// such a write's durability is unknown for good: every waiter the failed fsync covered gets its
// error, not only the one that ran it.
func (c *groupCommit) failedFor(seq uint64) error {
	if seq <= c.forgottenTo {
		return errors.New("fsync: an fsync covering this record may have failed (too many failures to tell)")
	}
	for _, v := range slices.Backward(c.failed) {
		if f := v; seq > f.from && seq <= f.to {
			return f.err
		}
	}
	return nil
}

// recordFailure remembers that the fsync that began after write first failed with err.
func (c *groupCommit) recordFailure(first uint64, err error) {
	// Writes made while this fsync ran may have been written back by it and lost with it, and
	// the kernel reports a writeback error once per file: they fail too, including one still
	// between its write and its bookkeeping (it will be writeSeq+1: appends are serialized).
	to := c.writeSeq + c.writing
	c.attemptedSeq = max(c.attemptedSeq, to)
	if n := len(c.failed); n > 0 && c.failed[n-1].to == first {
		c.failed[n-1].to = to // a run of failures: one range
	} else if to > first {
		c.failed = append(c.failed, failedSync{from: first, to: to, err: err})
		if len(c.failed) > maxFailedSyncs {
			c.forgottenTo = c.failed[0].to
			c.failed = slices.Delete(c.failed, 0, 1)
		}
	}
}

// syncLocked fsyncs every dirty segment, and with syncRecordsAndAcks the dirty ack files. Caller
// holds mu; it is released during the fsyncs.
func (l *Log) syncLocked(scope syncScope) error {
	c := &l.commit
	c.syncing = true
	target := c.writeSeq
	first := c.attemptedSeq // writes after it are covered by an fsync for the first time
	c.attemptedSeq = max(c.attemptedSeq, target)
	files, dir := l.takeDirtyLocked(scope)
	l.mu.Unlock()
	err := syncFiles(files, dir, l.opts.Dir)
	l.mu.Lock()
	c.syncing = false
	l.cond.Broadcast()
	if err != nil {
		err = fmt.Errorf("fsync: %w", err)
		c.recordFailure(first, err)
		return err
	}
	c.syncedSeq = max(c.syncedSeq, target)
	return nil
}

// takeDirtyLocked returns the files to fsync and clears their dirty marks, and whether the
// directory needs an fsync too. Caller holds mu.
func (l *Log) takeDirtyLocked(scope syncScope) (files []File, dir bool) {
	// Every segment before any ack file: a record rewritten elsewhere (a shutdown saving the rest
	// of a delivery) acknowledges its old copy, and that ack must not become durable before the
	// new copy does (fsyncs run in this order; a power failure may stop them anywhere).
	acks := scope == syncRecordsAndAcks
	var ackFiles []File
	for _, s := range l.segs {
		if s.dirty {
			files = append(files, s.f)
			s.dirty = false
		}
		if acks && s.ackDirty {
			ackFiles = append(ackFiles, s.ack)
			s.ackDirty = false
		}
	}
	if acks {
		l.commit.acksSyncedAt = time.Now()
	}
	dir = l.commit.dirDirty
	l.commit.dirDirty = false
	return append(files, ackFiles...), dir
}

// syncFiles fsyncs files in order, then the directory when dir is true.
func syncFiles(files []File, dir bool, path string) error {
	var errs []error
	for _, f := range files {
		// A segment deleted meanwhile has nothing left worth syncing.
		if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if dir {
		errs = append(errs, syncDir(path))
	}
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // the configured directory
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// waitSyncIdleLocked waits until no fsync runs. Caller holds mu.
func (l *Log) waitSyncIdleLocked() {
	for l.commit.syncing {
		l.cond.Wait()
	}
}

// startSyncLoop starts syncLoop; Close stops it.
func (l *Log) startSyncLoop(every time.Duration) {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.syncLoop(every)
}

// syncLoop is the FsyncInterval group commit, and FsyncAlways's ack sync.
func (l *Log) syncLoop(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			var err error
			if !l.commit.syncing && !l.closed {
				err = l.syncLocked(syncRecordsAndAcks)
			}
			l.mu.Unlock()
			if err != nil && l.opts.OnBackgroundError != nil {
				l.opts.OnBackgroundError(err)
			}
		}
	}
}

// Sync makes everything written so far durable, whatever the policy: segments first, then the
// ack files. A caller that rewrote records elsewhere calls it before acknowledging the old copies:
// otherwise the kernel may write the ack (or the unlink of a whole segment) back before the new
// copy, and a power failure in between keeps neither.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waitSyncIdleLocked()
	if l.closed {
		return ErrClosed
	}
	return l.syncLocked(syncRecordsAndAcks)
}
