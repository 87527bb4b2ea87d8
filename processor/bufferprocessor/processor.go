package bufferprocessor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// bufferProcessor owns the queue, the optional disk log and the workers.
type bufferProcessor struct {
	cfg    *Config
	next   consumer.Traces
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	// fs is the file system of the disk log (tests inject failures).
	fs diskqueue.FS

	q       *queue
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
	// keptAtShutdown counts the spans Shutdown left on disk for the next start (stopped
	// deliveries and the memory queue), for the line saying so.
	keptAtShutdown atomic.Int64
	// inFlight tracks every delivery in progress: for the gauges, and for what a delivery that
	// ignores shutdown's cancellation loses (its spans only in memory).
	inFlight *inFlight
	// state writes the operator's lines: deliveries failing and recovering, the buffer full.
	state *stateLog
	// stuckGrace is how long Shutdown waits, after canceling the deliveries at its deadline, for
	// them to return before it saves the memory queue and closes the log without them.
	stuckGrace time.Duration
}

// stuckDeliveryGrace: a next consumer that honors cancellation returns at once; one that does
// not would otherwise hold Shutdown (and the memory queue it has not saved yet) until the process
// is killed.
const stuckDeliveryGrace = 5 * time.Second

var _ processor.Traces = (*bufferProcessor)(nil)

func newBufferProcessor(set processor.Settings, cfg *Config, next consumer.Traces) (*bufferProcessor, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("create telemetry: %w", err)
	}
	return &bufferProcessor{
		cfg: cfg, next: next, logger: set.Logger, tel: tel, ctx: context.Background(), fs: diskqueue.OS{},
		stuckGrace: stuckDeliveryGrace,
	}, nil
}

// Capabilities: the processor keeps each batch after ConsumeTraces returns and merges batches, so
// it must own them (the pipeline clones for it when the data is shared).
func (p *bufferProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start opens the disk log (if any), registers the gauges and starts the workers.
func (p *bufferProcessor) Start(ctx context.Context, _ component.Host) error {
	if p.cfg.deprecatedKeys.buffer {
		p.logger.Warn("The buffer processor's setting "+deprecatedBufferKey+" is deprecated and will be removed: rename it to "+queueSizeKey,
			zap.String("deprecated_key", deprecatedBufferKey), zap.String("new_key", queueSizeKey))
	}
	var writeAhead bool
	if p.cfg.Storage.HasValue() {
		s := p.cfg.Storage.Get()
		writeAhead = s.Mode == ModeWriteAhead
		log, st, err := diskqueue.Open(diskqueue.Options{
			Dir:           s.Directory,
			CapacityBytes: s.CapacityMiB << 20,
			Fsync:         fsyncPolicy(s.Fsync),
			FsyncInterval: s.FsyncInterval,
			FS:            p.fs,
			OnBackgroundError: func(err error) {
				p.logger.Error("Disk buffer maintenance failed", zap.Error(err))
			},
			OnCorrupt: func() { p.tel.ProcessorBufferCorruptRecords.Add(p.ctx, 1) },
		})
		if err != nil {
			return fmt.Errorf("storage.directory %q: %w", s.Directory, err)
		}
		p.log = log
		if st.Pending.Records > 0 || st.Corrupt > 0 {
			p.tel.ProcessorBufferReplayedBatches.Add(ctx, st.Pending.Records)
			p.tel.ProcessorBufferDuplicatesPossibleBatches.Add(ctx, st.DuplicatesPossible)
			p.logger.Warn("Replaying what the disk buffer kept from the last run: it is delivered before new data waits long",
				zap.Int64("batches", st.Pending.Records), zap.Int64("spans", st.Pending.Spans),
				zap.Int64("duplicates_possible", st.DuplicatesPossible), zap.Int64("damaged_regions", st.Corrupt))
		}
	}
	p.q = newQueue(queueSettings{
		maxBatches: p.cfg.QueueSize,
		log:        p.log,
		writeAhead: writeAhead,
		dropOldest: p.cfg.WhenFull == WhenFullDropOldest,
		batchWait:  p.cfg.MaxBatchWait,
		fullWait:   p.cfg.FullWait,
		onDrop:     p.countDrop,
		logger:     p.logger,
	})
	p.breaker = newCircuitBreaker(p.cfg.Retry)
	p.inFlight = newInFlight()
	p.state = newStateLog(p.logger, p.held)
	if err := p.registerGauges(); err != nil {
		return errors.Join(err, p.closeLog())
	}
	p.deliverCtx, p.cancelDeliver = context.WithCancel(context.Background())
	p.stopRetry = make(chan struct{})
	p.alive = true
	for range p.cfg.Threads {
		p.wg.Add(1)
		go p.worker()
	}
	return nil
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
func (p *bufferProcessor) held() heldSpans {
	_, memSpans, _ := p.q.memStats()
	h := heldSpans{memory: memSpans}
	h.inFlight, _ = p.inFlight.stats()
	if p.log != nil {
		h.disk = p.log.Unread().Spans
	}
	return h
}

// oldestAge is how long ago the oldest span the buffer holds was enqueued: in memory, unread on
// disk, or in a delivery in progress (0 when none).
func (p *bufferProcessor) oldestAge(now time.Time) time.Duration {
	_, oldest := p.inFlight.stats()
	if m := p.q.oldestEnqueued(); !m.IsZero() && (oldest.IsZero() || m.Before(oldest)) {
		oldest = m
	}
	if oldest.IsZero() {
		return 0
	}
	return now.Sub(oldest)
}

func (p *bufferProcessor) registerGauges() error {
	memGauge := func(pick func(b, s, by int64) int64) metric.Int64Callback {
		return func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(pick(p.q.memStats()))
			return nil
		}
	}
	errs := []error{
		p.tel.RegisterProcessorBufferMemoryBatchesCallback(memGauge(func(b, _, _ int64) int64 { return b })),
		p.tel.RegisterProcessorBufferMemorySpansCallback(memGauge(func(_, s, _ int64) int64 { return s })),
		p.tel.RegisterProcessorBufferMemoryBytesCallback(memGauge(func(_, _, by int64) int64 { return by })),
		p.tel.RegisterProcessorBufferMemoryCapacityCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(p.cfg.QueueSize))
			return nil
		}),
		p.tel.RegisterProcessorBufferInFlightSpansCallback(func(_ context.Context, o metric.Int64Observer) error {
			spans, _ := p.inFlight.stats()
			o.Observe(spans)
			return nil
		}),
		p.tel.RegisterProcessorBufferOldestAgeCallback(func(_ context.Context, o metric.Float64Observer) error {
			o.Observe(p.oldestAge(time.Now()).Seconds())
			return nil
		}),
	}
	if p.log != nil {
		capacity := p.cfg.Storage.Get().CapacityMiB << 20
		errs = append(errs,
			p.tel.RegisterProcessorBufferDiskBatchesCallback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(p.log.Unread().Records)
				return nil
			}),
			p.tel.RegisterProcessorBufferDiskSpansCallback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(p.log.Unread().Spans)
				return nil
			}),
			p.tel.RegisterProcessorBufferDiskBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(p.log.SizeBytes())
				return nil
			}),
			p.tel.RegisterProcessorBufferDiskCapacityCallback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(capacity)
				return nil
			}),
		)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register gauges: %w", err)
	}
	return nil
}

// ConsumeTraces returns nil once the batch is held (memory, or disk per the fsync policy).
func (p *bufferProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	spans := int64(td.SpanCount())
	if !p.alive {
		return fmt.Errorf("buffer processor: not started: %w", ErrShuttingDown)
	}
	// The pipeline releases td when this returns (with pdata.useProtoPooling, into pdata's pools
	// for the next call); a batch kept in memory needs a reference of its own.
	pref.RefTraces(td)
	kept, err := p.q.push(ctx, td)
	if !kept {
		pref.UnrefTraces(td)
	}
	if err != nil {
		p.tel.ProcessorBufferRefusedSpans.Add(ctx, spans)
		p.state.refusedFull(spans, err, time.Now())
		return err
	}
	p.tel.ProcessorBufferEnqueuedSpans.Add(ctx, spans)
	return nil
}

func (p *bufferProcessor) countDrop(reason string, spans int64) {
	p.tel.ProcessorBufferDroppedSpans.Add(p.ctx, spans, metric.WithAttributes(attribute.String("reason", reason)))
}

// Shutdown stops intake. With storage, retries stop at once, in-flight deliveries may finish
// until the deadline, and everything still in memory is written to disk. Without storage, workers
// keep delivering until the memory queue is empty or the deadline expires; what is left then is
// counted as dropped (reason "shutdown") and logged once. The deadline is ctx's or
// shutdown_timeout, whichever comes first: the collector passes no deadline on SIGTERM, and an
// exporter retrying a dead Elasticsearch would otherwise hold the process until it is killed.
func (p *bufferProcessor) Shutdown(ctx context.Context) error {
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
		grace := time.NewTimer(p.stuckGrace)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
			// The next consumer ignores cancellation. Its deliveries are left behind: their disk
			// records stay unacknowledged (replayed), their memory-only spans are lost.
			stuck := p.inFlight.memoryOnly()
			p.countDrop(reasonShutdown, stuck)
			p.lostAtShutdown.Add(stuck)
			p.logger.Error("Deliveries did not return after being cancelled (the next consumer ignores cancellation); shutting down without them",
				zap.Duration("waited", p.stuckGrace), zap.Int64("memory_spans_lost", stuck))
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
		p.logger.Error("Spans lost at shutdown: they could not be delivered or saved before the deadline",
			zap.Int64("spans", lost), zap.Bool("storage", p.log != nil))
	}
	p.logStopped(lost)
	return p.closeLog()
}

// logStopped says what became of what the buffer held: kept on disk for the next start (warn: an
// operator must know the data waits there), or delivered (info; lost spans have their own error).
func (p *bufferProcessor) logStopped(lost int64) {
	var kept int64
	if p.log != nil {
		// Records never read, and what the stopped deliveries and the memory queue left on disk.
		kept = p.log.Unread().Spans + p.keptAtShutdown.Load()
	}
	if kept > 0 {
		p.logger.Warn("The buffer stopped: what it could not deliver is kept on disk and delivered after the next start",
			zap.Int64("disk_spans", kept), zap.Int64("lost_spans", lost))
		return
	}
	if lost == 0 {
		p.logger.Info("The buffer stopped: everything it acknowledged was delivered")
	}
}

func (p *bufferProcessor) stopRetries() {
	p.stopOnce.Do(func() { close(p.stopRetry) })
}

func (p *bufferProcessor) closeLog() error {
	if p.log == nil {
		return nil
	}
	if err := p.log.Close(); err != nil {
		return fmt.Errorf("close disk buffer: %w", err)
	}
	return nil
}
