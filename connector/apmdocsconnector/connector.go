package apmdocsconnector

import (
	"context"
	"crypto/md5" //nolint:gosec // APM Server's grouping key is an MD5 of the error's frames: the same hash gives the same groups
	"os"
	"sync"
	"time"

	"github.com/elastic/apm-data/input/otlp"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/elastic/apm-data/model/modelprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/aggregate"
	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/metadata"
	"github.com/tracegate/tracegate/internal/apmevent"
)

// apmDocs is the connector all sides share.
type apmDocs struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	convert   *otlp.Consumer
	// enrich is APM Server's processing before its aggregation; route after it.
	enrich, route modelpb.BatchProcessor
	dropUnsampled modelpb.BatchProcessor // nil unless drop_unsampled
	observer      *modelpb.Observer
	agg           *aggregate.Aggregator // nil without intervals
	sink          metricsetSink
	writer        *metricsetWriter

	mu      sync.Mutex
	sides   int
	started bool
	stop    chan struct{}
	done    chan struct{}
}

func newAPMDocs(set connector.Settings, cfg *Config) (*apmDocs, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	a := &apmDocs{cfg: cfg, logger: set.Logger, telemetry: tb}
	a.convert = otlp.NewConsumer(otlp.ConsumerConfig{
		Logger: set.Logger, Processor: modelpb.ProcessBatchFunc(collect), Semaphore: unlimited{},
	})
	a.enrich = modelprocessor.Chained{
		modelprocessor.SetHostHostname{},
		modelprocessor.SetServiceNodeName{},
		modelprocessor.SetGroupingKey{NewHash: md5.New},
		modelprocessor.SetErrorMessage{},
		modelprocessor.SetCulprit{},
	}
	a.route = &modelprocessor.SetDataStream{Namespace: cfg.Namespace}
	if cfg.DropUnsampled {
		// Counted by the caller, which has the request's context: the batch's length before and after.
		a.dropUnsampled = modelprocessor.NewDropUnsampled(false, func(int64) {})
	}
	hostname := cfg.Observer.Hostname
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	a.observer = &modelpb.Observer{Hostname: hostname, Type: cfg.Observer.Type, Version: cfg.Observer.Version}
	if len(cfg.Aggregation.Intervals) > 0 {
		a.agg = aggregate.New(cfg.Aggregation.Intervals, aggregate.Limits{
			Services: cfg.Aggregation.MaxServices, Groups: cfg.Aggregation.MaxGroups,
		})
	}
	a.writer = &metricsetWriter{a: a}
	return a, nil
}

func (a *apmDocs) addSide(next consumer.Logs) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sides++
	a.sink.offer(next)
}

// Start starts the aggregation's clock once, for the first side.
func (a *apmDocs) Start(ctx context.Context, _ component.Host) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started {
		return nil
	}
	a.started = true
	if a.agg != nil {
		if err := a.telemetry.RegisterConnectorApmdocsOpenWindowsCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(a.agg.Pending()))
			return nil
		}); err != nil {
			return err
		}
		a.stop, a.done = make(chan struct{}), make(chan struct{})
		go a.tick(context.WithoutCancel(ctx)) // the clock outlives Start; telemetry values stay
	}
	return nil
}

// sideDown stops the clock when the last side shuts down, writing every open window.
func (a *apmDocs) sideDown(ctx context.Context) error {
	a.mu.Lock()
	a.sides--
	last := a.sides == 0
	a.mu.Unlock()
	if !last {
		return nil
	}
	if a.stop != nil {
		close(a.stop)
		<-a.done
		a.writer.write(ctx, a.agg.HarvestAll(time.Now()), true)
	}
	a.telemetry.Shutdown()
	return nil
}

func (a *apmDocs) tick(ctx context.Context) {
	defer close(a.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case now := <-t.C:
			a.writer.write(ctx, a.agg.Harvest(now, a.cfg.Aggregation.Delay), false)
		}
	}
}

func (a *apmDocs) traces(ctx context.Context, td ptrace.Traces, next consumer.Logs) error {
	batch, err := a.converted(ctx, func(ctx context.Context) error { return a.convert.ConsumeTraces(ctx, td) })
	if err != nil {
		a.dropped(ctx, int64(td.SpanCount()), reasonUnconvertible, err)
		return nil
	}
	return a.write(ctx, batch, next)
}

func (a *apmDocs) metrics(ctx context.Context, md pmetric.Metrics, next consumer.Logs) error {
	batch, err := a.converted(ctx, func(ctx context.Context) error { return a.convert.ConsumeMetrics(ctx, md) })
	if err != nil {
		a.dropped(ctx, int64(md.DataPointCount()), reasonUnconvertible, err)
		return nil
	}
	return a.write(ctx, batch, next)
}

// logs takes both the intake receiver's APM events and ordinary log records.
func (a *apmDocs) logs(ctx context.Context, ld plog.Logs, next consumer.Logs) error {
	events, rest := a.splitEvents(ctx, ld)
	batch := modelpb.Batch(events)
	if rest.LogRecordCount() > 0 {
		converted, err := a.converted(ctx, func(ctx context.Context) error { return a.convert.ConsumeLogs(ctx, rest) })
		if err != nil {
			a.dropped(ctx, int64(rest.LogRecordCount()), reasonUnconvertible, err)
		}
		batch = append(batch, converted...)
	}
	return a.write(ctx, batch, next)
}

// splitEvents decodes the records of APM event scopes and leaves the other records in rest.
func (a *apmDocs) splitEvents(ctx context.Context, ld plog.Logs) ([]*modelpb.APMEvent, plog.Logs) {
	var events []*modelpb.APMEvent
	rest := plog.NewLogs()
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		var others plog.ResourceLogs
		hasOthers := false
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			if !apmevent.IsEvents(sl) {
				if !hasOthers {
					hasOthers = true
					others = rest.ResourceLogs().AppendEmpty()
					rl.Resource().CopyTo(others.Resource())
					others.SetSchemaUrl(rl.SchemaUrl())
				}
				sl.CopyTo(others.ScopeLogs().AppendEmpty())
				continue
			}
			for k := 0; k < sl.LogRecords().Len(); k++ {
				e, err := apmevent.Decode(sl.LogRecords().At(k))
				if err != nil {
					a.dropped(ctx, 1, reasonUnconvertible, err)
					continue
				}
				events = append(events, e)
			}
		}
	}
	return events, rest
}

// batchKey carries, through apm-data's consumer, where its batch goes: the consumer hands the
// converted events to its processor synchronously, within the call.
type batchKey struct{}

func collect(ctx context.Context, b *modelpb.Batch) error {
	out := ctx.Value(batchKey{}).(*modelpb.Batch)
	*out = append(*out, *b...)
	return nil
}

func (a *apmDocs) converted(ctx context.Context, consume func(context.Context) error) (modelpb.Batch, error) {
	var out modelpb.Batch
	err := consume(context.WithValue(ctx, batchKey{}, &out))
	return out, err
}

func (a *apmDocs) dropped(ctx context.Context, n int64, reason string, err error) {
	a.telemetry.ConnectorApmdocsDroppedEvents.Add(ctx, n, metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason))))
	if err != nil {
		a.logger.Warn("events not written", zap.String("reason", reason), zap.Int64("events", n), zap.Error(err))
	}
}

// unlimited is apm-data's semaphore without a limit: the receivers and the memory limiter in
// front bound what is converted at once.
type unlimited struct{}

func (unlimited) Acquire(context.Context, int64) error { return nil }
func (unlimited) TryAcquire(int64) bool                { return true }
func (unlimited) Release(int64)                        {}
