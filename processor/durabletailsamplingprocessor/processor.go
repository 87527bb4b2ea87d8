package durabletailsamplingprocessor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/tracelog"
)

// maxDeliverySpans is the most spans passed on in one call: the buffer's batch size in tracegate's
// configs, so that a delivery is one bulk.
const maxDeliverySpans = 2048

type tailProcessor struct {
	cfg      *Config
	next     consumer.Traces
	logger   *zap.Logger
	policies *policy.Set
	tel      *telemetry
	now      func() time.Time
	tick     time.Duration

	mu        sync.Mutex
	pending   *pendingStore
	decisions *decisions
	outbox    []*pendingTrace // kept, not yet passed on
	retry     []*delivery     // passed on and refused: tried again at the next tick
	heldBytes int64           // pending, outbox and retry
	lastScan  time.Time
	closing   bool

	// The pause before refused deliveries are tried again (deliver's goroutine only).
	retryWait time.Duration
	retryAt   time.Time

	// log holds pending spans on disk (nil: memory only). logMu makes an append and the segment
	// reference taken for it one step, so a rotation in between cannot delete the segment.
	log   *tracelog.Log
	logMu sync.Mutex

	// Published under mu for the gauges, read without it.
	gaugeTraces, gaugeSpans, gaugeHeld atomic.Int64

	stop, stopped chan struct{}
	// runCtx is the deciding goroutine's: cancelled by Shutdown, so a delivery in progress ends.
	runCtx    context.Context
	cancelRun context.CancelFunc
}

// delivery is kept traces merged for one call to the next consumer.
type delivery struct {
	td     ptrace.Traces
	traces []*pendingTrace
	spans  int64
	bytes  int64
}

func newTailProcessor(set processor.Settings, cfg *Config, next consumer.Traces) (*tailProcessor, error) {
	set.Logger.Debug("creating durable tail sampling processor")
	policies, err := policy.New(cfg.Policies, cfg.SampleOnFirstMatch)
	if err != nil {
		return nil, err
	}
	p := &tailProcessor{
		cfg: cfg, next: next, logger: set.Logger, policies: policies, now: time.Now,
		tick:      min(max(cfg.DecisionWait/10, 10*time.Millisecond), time.Second),
		pending:   newPendingStore(int(min(cfg.ExpectedNewTracesPerSec*uint64(cfg.DecisionWait/time.Second+1), cfg.NumTraces))),
		decisions: newDecisions(cfg.DecisionCache),
	}
	if p.tel, err = newTelemetry(set.TelemetrySettings, p); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *tailProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true} // spans are moved into their traces
}

// Start opens the disk log, rebuilds the traces that were pending when the process stopped, and
// starts deciding.
func (p *tailProcessor) Start(context.Context, component.Host) error {
	if p.cfg.Storage.Directory != "" {
		if err := p.openLog(); err != nil { //nolint:contextcheck // the log's fsync goroutine outlives Start's context
			return err
		}
	}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	p.runCtx, p.cancelRun = context.WithCancel(context.Background())
	go p.run(p.runCtx) //nolint:contextcheck // deciding outlives Start; Shutdown cancels runCtx
	return nil
}

func (p *tailProcessor) run(ctx context.Context) {
	defer close(p.stopped)
	t := time.NewTicker(p.tick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.decideDue(ctx, p.now())
			p.deliver(ctx)
		}
	}
}

// Shutdown stops deciding. Without storage it decides every pending trace now and passes the kept
// ones on (the next consumer is still running: the collector shuts pipelines down from the
// receivers on). With storage, pending traces stay on disk and are decided after the restart.
func (p *tailProcessor) Shutdown(ctx context.Context) error {
	if p.stop != nil {
		p.cancelRun()
		close(p.stop)
		<-p.stopped
	}
	p.mu.Lock()
	p.closing = true
	if p.log == nil {
		now := p.now()
		p.decideLocked(ctx, p.pending.all(), now)
	}
	p.publishLocked()
	p.mu.Unlock()
	p.deliver(ctx)
	p.mu.Lock()
	lost := int64(0)
	for _, d := range p.retry {
		lost += d.spans
	}
	for _, t := range p.outbox {
		lost += t.count
	}
	p.mu.Unlock()
	if p.log == nil {
		if lost > 0 { // with storage they stay on disk, undone, and are decided again after the restart
			p.tel.lost(ctx, lost, reasonShutdown)
			p.logger.Error("Kept traces could not be passed on before shutdown and are lost", zap.Int64("spans", lost))
		}
		return nil
	}
	return p.log.Close()
}
