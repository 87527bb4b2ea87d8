package bufferprocessor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// bufferProcessor owns one signal's queue, optional disk log and workers; T is the signal's pdata
// type. The collector makes one processor per pipeline, so each signal gets its own (see newBuffer).
type bufferProcessor[T any] struct {
	cfg    *Config
	sig    signal[T]
	next   func(context.Context, T) error
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	items  itemTelemetry            // the signal's item counters and gauges
	attrs  metric.MeasurementOption // on every measurement: bufferAttributes
	id     component.ID             // the processor's, for the readiness report
	// fs is the file system of the disk log (tests inject failures).
	fs diskqueue.FS

	q       *queue[T]
	breaker *circuitBreaker // opens while the next consumer fails
	log     *diskqueue.Log
	wg      sync.WaitGroup
	ctx     context.Context // for metrics recorded without a caller's context (workers); never cancelled
	alive   bool

	// deliverCtx is passed to the next consumer; cancelled when the Shutdown deadline expires.
	deliverCtx    context.Context
	cancelDeliver context.CancelFunc
	// stopRetry is closed to stop backoff waits: at once with storage, at the deadline without.
	stopRetry chan struct{}
	stopOnce  sync.Once

	lostAtShutdown atomic.Int64
	// keptAtShutdown counts the items Shutdown left on disk for the next start (stopped
	// deliveries and the memory queue), for the line saying so.
	keptAtShutdown atomic.Int64
	// inFlight tracks every delivery in progress: for the gauges, and for what a delivery that
	// ignores shutdown's cancellation loses (its items only in memory).
	inFlight *inFlight[T]
	// state writes the operator's lines: deliveries failing and recovering, the buffer full.
	state *stateLog
	// timing is the clock the queue, the workers and the circuit breaker read, and the pauses
	// that are not settings.
	timing timing
	// releaseCapacity gives back the storage capacity this buffer shares with the other signals'.
	releaseCapacity func()
}

// newBuffer makes the buffer of one signal: sig and its item telemetry, next its next consumer.
func newBuffer[T any](set processor.Settings, cfg *Config, sig signal[T], items func(*metadata.TelemetryBuilder) itemTelemetry,
	next func(context.Context, T) error,
) (*bufferProcessor[T], error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("create telemetry: %w", err)
	}
	return &bufferProcessor[T]{
		cfg: cfg, sig: sig, next: next, logger: set.Logger, tel: tel, items: items(tel), ctx: context.Background(),
		id:    set.ID,
		attrs: bufferAttributes(set.ID, sig.name()),
		fs:    diskqueue.OS{}, timing: defaultTiming(),
	}, nil
}

// Capabilities: the processor keeps each batch after ConsumeTraces returns and merges batches, so
// it must own them (the pipeline clones for it when the data is shared).
func (p *bufferProcessor[T]) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start opens the disk log (if any), registers the gauges and starts the workers.
func (p *bufferProcessor[T]) Start(ctx context.Context, host component.Host) error {
	for _, u := range p.cfg.renamed {
		p.logger.Warn("The buffer processor's setting "+u.old+" is deprecated and will be removed: rename it to "+u.current,
			zap.String("deprecated_key", u.old), zap.String("new_key", u.current))
	}
	writeAhead, err := p.openStorage(ctx)
	if err != nil {
		return err
	}
	p.q = newQueue(queueSettings[T]{
		sig:        p.sig,
		maxBatches: p.cfg.QueueSize,
		log:        p.log,
		writeAhead: writeAhead,
		dropOldest: p.cfg.WhenFull == WhenFullDropOldest,
		batchWait:  p.cfg.MaxBatchWait,
		fullWait:   p.cfg.FullWait,
		onDrop:     p.countDrop,
		logger:     p.logger,
		clock:      p.timing.clock,
	})
	p.breaker = newCircuitBreaker(p.cfg.Retry, p.timing.clock)
	p.inFlight = newInFlight[T]()
	p.state = newStateLog(p.logger, p.held)
	if err := p.registerGauges(); err != nil {
		return errors.Join(err, p.closeLog())
	}
	p.deliverCtx, p.cancelDeliver = context.WithCancel(context.Background()) //nolint:gosec // G118: Shutdown calls cancelDeliver
	p.stopRetry = make(chan struct{})
	p.alive = true
	for range p.cfg.Threads {
		p.wg.Add(1)
		go p.worker()
	}
	report := readiness.Buffer{ID: p.id, Mode: readiness.ModeMemory}
	if p.cfg.Storage.HasValue() {
		report.Mode, report.Directory = p.cfg.Storage.Get().Mode, p.cfg.Storage.Get().Directory
	}
	readiness.ReportBuffer(host, report)
	return nil
}

// openStorage opens the signal's disk log under storage.directory when storage is configured,
// and says what the last run left in it. writeAhead reports storage.mode write_ahead.
func (p *bufferProcessor[T]) openStorage(ctx context.Context) (writeAhead bool, err error) {
	if !p.cfg.Storage.HasValue() {
		return false, nil
	}
	s := p.cfg.Storage.Get()
	dir := filepath.Join(s.Directory, p.sig.subdir())
	var shared *diskqueue.SharedCapacity
	shared, p.releaseCapacity = acquireCapacity(s.Directory, s.CapacityMiB<<20)
	log, st, err := diskqueue.Open(diskqueue.Options{
		Dir:           dir,
		CapacityBytes: s.CapacityMiB << 20,
		Shared:        shared,
		Fsync:         fsyncPolicy(s.Fsync),
		FsyncInterval: s.FsyncInterval,
		FS:            p.fs,
		OnBackgroundError: func(err error) {
			p.logger.Error("Disk buffer maintenance failed", zap.Error(err))
		},
		OnCorrupt: func() { p.tel.ProcessorBufferCorruptRecords.Add(p.ctx, 1, p.attrs) },
	})
	if err != nil {
		p.releaseCapacity()
		return false, fmt.Errorf("storage.directory %q: %w", dir, err)
	}
	p.log = log
	if st.Pending.Records > 0 || st.Corrupt > 0 {
		p.tel.ProcessorBufferReplayedBatches.Add(ctx, st.Pending.Records, p.attrs)
		p.tel.ProcessorBufferDuplicatesPossibleBatches.Add(ctx, st.DuplicatesPossible, p.attrs)
		p.logger.Warn("Replaying what the disk buffer kept from the last run: it is delivered before new data waits long",
			zap.Int64("batches", st.Pending.Records), zap.Int64(p.sig.field(), st.Pending.Items),
			zap.Int64("duplicates_possible", st.DuplicatesPossible), zap.Int64("damaged_regions", st.Corrupt))
	}
	return s.Mode == ModeWriteAhead, nil
}

func fsyncPolicy(s string) diskqueue.FsyncPolicy {
	switch s {
	case FsyncAlways:
		return diskqueue.FsyncAlways
	case FsyncNever:
		return diskqueue.FsyncNever
	default:
		return diskqueue.FsyncInterval
	}
}

// held returns what the buffer holds, as the gauges report it.
func (p *bufferProcessor[T]) held() heldItems {
	_, memItems, _ := p.q.memStats()
	h := heldItems{memory: memItems, inFlight: p.inFlight.stats().items, field: p.sig.field()}
	if p.log != nil {
		h.disk = p.log.Unread().Items
	}
	return h
}

// oldestAge is how long ago the oldest item the buffer holds was enqueued: in memory, unread on
// disk, or in a delivery in progress (0 when none).
func (p *bufferProcessor[T]) oldestAge(now time.Time) time.Duration {
	oldest := p.inFlight.stats().oldest
	if m := p.q.oldestEnqueued(); !m.IsZero() && (oldest.IsZero() || m.Before(oldest)) {
		oldest = m
	}
	if oldest.IsZero() {
		return 0
	}
	return now.Sub(oldest)
}

// hold is ConsumeTraces (ConsumeLogs, ConsumeMetrics): it returns nil once the batch is held
// (memory, or disk per the fsync policy).
func (p *bufferProcessor[T]) hold(ctx context.Context, data T) error {
	items := p.sig.items(data)
	if !p.alive {
		return fmt.Errorf("buffer processor: not started: %w", ErrShuttingDown)
	}
	var err error
	if items > 0 { // items counted once: the count walks the whole batch
		// The pipeline releases data when this returns (with pdata.useProtoPooling, into pdata's
		// pools for the next call): the buffer adopts it with a reference of its own (batch.go).
		err = p.q.push(ctx, p.refs().adopt(data, items, p.timing.clock.Now()))
	}
	if err != nil {
		p.items.refused.Add(ctx, items, p.attrs)
		p.state.refusedFull(items, err, p.timing.clock.Now())
		return err
	}
	p.items.enqueued.Add(ctx, items, p.attrs)
	return nil
}

func (p *bufferProcessor[T]) countDrop(reason string, items int64) {
	p.items.dropped.Add(p.ctx, items, p.attrs, metric.WithAttributes(attribute.String("reason", reason)))
}

// Shutdown stops intake. With storage, retries stop at once, in-flight deliveries may finish
// until the deadline, and everything still in memory is written to disk. Without storage, workers
// keep delivering until the memory queue is empty or the deadline expires; what is left then is
// counted as dropped (reason "shutdown") and logged once. The deadline is ctx's or
// shutdown_timeout, whichever comes first: the collector passes no deadline on SIGTERM, and an
// exporter retrying a dead Elasticsearch would otherwise hold the process until it is killed.
func (p *bufferProcessor[T]) Shutdown(ctx context.Context) error {
	defer p.tel.Shutdown()
	if !p.alive {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.ShutdownTimeout)
	defer cancel()
	p.q.close()
	if p.log != nil {
		p.stopRetries()
	}
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		p.q.stop()
		p.stopRetries()
		p.cancelDeliver()
		grace := time.NewTimer(p.timing.stuckGrace) // the system clock, as Shutdown's deadline
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
			// The next consumer ignores cancellation. Its deliveries are left behind: their disk
			// records stay unacknowledged (replayed), their memory-only items are lost.
			stuck := p.inFlight.memoryOnly()
			p.countDrop(reasonShutdown, stuck)
			p.lostAtShutdown.Add(stuck)
			p.logger.Error("Deliveries did not return after being cancelled (the next consumer ignores cancellation); shutting down without them",
				zap.Duration("waited", p.timing.stuckGrace), zap.Int64("memory_"+p.sig.field()+"_lost", stuck))
		}
	}
	p.cancelDeliver()
	_, queued, _ := p.q.memStats()
	drainLost := p.q.drain()
	lost := p.lostAtShutdown.Load() + drainLost
	if p.log != nil {
		p.keptAtShutdown.Add(queued - drainLost)
	}
	if lost > 0 {
		p.logger.Error("Data lost at shutdown: it could not be delivered or saved before the deadline",
			zap.Int64(p.sig.field(), lost), zap.Bool("storage", p.log != nil))
	}
	p.logStopped(lost)
	return p.closeLog()
}

// logStopped says what became of what the buffer held: kept on disk for the next start (warn: an
// operator must know the data waits there), or delivered (info; lost items have their own error).
func (p *bufferProcessor[T]) logStopped(lost int64) {
	var kept int64
	if p.log != nil {
		// Records never read, and what the stopped deliveries and the memory queue left on disk.
		kept = p.log.Unread().Items + p.keptAtShutdown.Load()
	}
	if kept > 0 {
		p.logger.Warn("The buffer stopped: what it could not deliver is kept on disk and delivered after the next start",
			zap.Int64("disk_"+p.sig.field(), kept), zap.Int64("lost_"+p.sig.field(), lost))
		return
	}
	if lost == 0 {
		p.logger.Info("The buffer stopped: everything it acknowledged was delivered")
	}
}

func (p *bufferProcessor[T]) stopRetries() {
	p.stopOnce.Do(func() { close(p.stopRetry) })
}

func (p *bufferProcessor[T]) closeLog() error {
	if p.log == nil {
		return nil
	}
	defer p.releaseCapacity()
	if err := p.log.Close(); err != nil {
		return fmt.Errorf("close disk buffer: %w", err)
	}
	return nil
}
