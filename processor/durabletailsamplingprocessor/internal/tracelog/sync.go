package tracelog

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"
)

// syncState is the group commit's bookkeeping: how many records are known durable, and the
// fsync round in progress, whose end every waiting Sync watches.
type syncState struct {
	mu     sync.Mutex
	synced uint64        // records covered by a successful fsync
	round  chan struct{} // closed when the fsync in progress ends; nil when none is
	err    error         // the first fsync failure, reported from then on
}

// note records the outcome of an fsync that covered the first covered records.
func (s *syncState) note(covered uint64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteLocked(covered, err)
}

func (s *syncState) noteLocked(covered uint64, err error) {
	switch {
	case err != nil && s.err == nil:
		// Linux may drop the dirty pages of a failed fsync, so a later fsync succeeding would not
		// prove they reached the disk: the failure stays.
		s.err = err
	case err == nil:
		s.synced = max(s.synced, covered)
	}
}

func (s *syncState) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Sync returns once every record appended before the call is as durable as the mode promises.
// With FsyncAlways it waits for an fsync covering them, which concurrent callers share; in the
// other modes it returns at once, as the write already happened. It returns the first fsync
// error the log met (FsyncInterval's background ones included), or ctx's error if ctx ends
// the wait.
func (l *Log) Sync(ctx context.Context) error {
	if l.opts.Fsync != FsyncAlways {
		return l.sync.failure()
	}
	return l.syncUpTo(ctx, l.appended.Load())
}

// syncUpTo waits until the first target records are fsynced. The first caller to find no round
// in progress leads one; the others wait for it to end and check again, since a round only
// covers what was appended when it began.
func (l *Log) syncUpTo(ctx context.Context, target uint64) error {
	for {
		s := &l.sync
		s.mu.Lock()
		if s.err != nil || s.synced >= target {
			err := s.err
			s.mu.Unlock()
			return err
		}
		round := s.round
		if round == nil {
			s.round = make(chan struct{})
			s.mu.Unlock()
			l.leadRound() // not cancellable: the callers waiting on this round need its outcome
			continue
		}
		s.mu.Unlock()
		select {
		case <-round:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// leadRound fsyncs the current segment on behalf of every Sync waiting, then ends the round.
func (l *Log) leadRound() {
	l.mu.Lock()
	f, covered := l.file, l.appended.Load()
	l.mu.Unlock()
	var err error
	if f != nil { // nil once closed, and Close's fsync covered everything
		err = l.fsync(f)
		// Retired meanwhile: retireFile noted its own fsync of the file, covering these records.
		if errors.Is(err, os.ErrClosed) {
			err = nil
		}
	}
	s := &l.sync
	s.mu.Lock()
	defer s.mu.Unlock()
	if f != nil {
		s.noteLocked(covered, err)
	}
	close(s.round)
	s.round = nil
}

// fsyncEvery is the FsyncInterval goroutine: each period, it fsyncs what was written since the
// last fsync, if anything was.
func (l *Log) fsyncEvery(period time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
			// A failure stays in l.sync for Sync and Close to report.
			_ = l.syncUpTo(context.Background(), l.appended.Load())
		}
	}
}
