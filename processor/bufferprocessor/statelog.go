package bufferprocessor

import (
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"
)

// stateLogInterval is the most often the buffer repeats a state line while the state lasts.
const stateLogInterval = time.Minute

// heldItems is what the buffer holds: memory + disk + in flight is every item acknowledged and
// not yet accepted by the next consumer. field names the items in the keys ("spans": memory_spans).
type heldItems struct {
	memory, disk, inFlight int64
	field                  string
}

func (h heldItems) fields() []zap.Field {
	return []zap.Field{zap.Int64("memory_"+h.field, h.memory), zap.Int64("disk_"+h.field, h.disk), zap.Int64("in_flight_"+h.field, h.inFlight)}
}

// stateLog tells an operator, in a few lines, what the buffer's counters say: deliveries start
// failing (the error, the next retry, what is held), still fail (at most once per interval),
// succeed again (after how long); the buffer is full and refuses clients (at most once per
// interval). Everything else is in the metrics.
type stateLog struct {
	logger   *zap.Logger
	held     func() heldItems
	interval time.Duration

	mu           sync.Mutex
	failingSince time.Time // zero: deliveries work
	failedLine   time.Time // when the last failing line was written
	attempts     int64     // failed attempts since failingSince
	refusedLine  time.Time // when the last buffer-full line was written
	refused      int64     // items refused since refusedLine
}

func newStateLog(logger *zap.Logger, held func() heldItems) *stateLog {
	return &stateLog{logger: logger, held: held, interval: stateLogInterval}
}

// failed records a failed attempt whose retry comes after retryIn.
func (s *stateLog) failed(err error, retryIn time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	first := s.failingSince.IsZero()
	if !first && now.Sub(s.failedLine) < s.interval {
		return
	}
	fields := append(s.held().fields(), zap.Error(err), zap.Duration("next_retry_in", retryIn))
	if first {
		s.failingSince = now
		s.logger.Warn("Deliveries to Elasticsearch are failing: the buffer keeps everything it acknowledged and retries until it succeeds", fields...)
	} else {
		fields = append(fields, zap.Duration("failing_for", now.Sub(s.failingSince).Round(time.Second)), zap.Int64("failed_attempts", s.attempts))
		s.logger.Warn("Deliveries to Elasticsearch still fail: the buffer keeps everything and retries", fields...)
	}
	s.failedLine = now
}

// succeeded records a delivery's success; the first after failures writes the recovery line.
func (s *stateLog) succeeded(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failingSince.IsZero() {
		return
	}
	fields := append(s.held().fields(), zap.Duration("failed_for", now.Sub(s.failingSince).Round(time.Millisecond)),
		zap.Int64("failed_attempts", s.attempts))
	s.logger.Warn("Deliveries to Elasticsearch succeed again: the buffer now delivers what it kept", fields...)
	s.failingSince, s.attempts = time.Time{}, 0
}

// refusedFull records items refused because the buffer is full (the clients are told to retry).
func (s *stateLog) refusedFull(items int64, err error, now time.Time) {
	if !errors.Is(err, ErrFull) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused += items
	if !s.refusedLine.IsZero() && now.Sub(s.refusedLine) < s.interval {
		return
	}
	h := s.held()
	s.logger.Warn("The buffer is full: new data is refused and clients are told to retry (429 / RESOURCE_EXHAUSTED)",
		append(h.fields(), zap.Int64("refused_"+h.field, s.refused))...)
	s.refusedLine, s.refused = now, 0
}
