package apmmetricsconnector

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/elastic/opentelemetry-collector-components/processor/lsmintervalprocessor"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
)

// Why pending sums were flushed (the flushes metric's reason attribute).
var (
	reasonInterval = attribute.NewSet(attribute.String("reason", "interval"))
	reasonWindow   = attribute.NewSet(attribute.String("reason", "window"))
	reasonSize     = attribute.NewSet(attribute.String("reason", "size"))
	reasonShutdown = attribute.NewSet(attribute.String("reason", "shutdown"))
)

// apmMetrics is one connector, shared by its traces, logs and metrics sides: they count into the
// same sums and the same store (EDOT's lsminterval processor: intervals, storage, limits).
type apmMetrics struct {
	cfg       *Config
	store     processor.Metrics
	telemetry *metadata.TelemetryBuilder
	logger    *zap.Logger
	metaKeys  []string
	now       func() time.Time

	mu      sync.Mutex
	counter counter
	// pending are the sums since the last flush, per client metadata (the store splits its
	// aggregation by the metadata_keys' values, read from the context a flush passes on).
	pending map[string]*pendingSums
	window  time.Time // the shortest interval's window the pending sums arrived in

	// sink is the store's next consumer, set by the metrics to metrics side.
	sink          *metricsSink
	created, down int // sides made and shut down (under lifeMu)
	// closed is set (under mu) when Shutdown takes the pending sums for the last time: items
	// counted later could never be flushed.
	closed bool

	lifeMu            sync.Mutex
	started, shutDown bool
	stopLoop          context.CancelFunc
	stopped           chan struct{}
}

type pendingSums struct {
	*sums
	info client.Info
}

func newAPMMetrics(ctx context.Context, set connector.Settings, cfg *Config) (*apmMetrics, error) {
	sink := &metricsSink{}
	lsmSet := processor.Settings{ID: set.ID, TelemetrySettings: set.TelemetrySettings, BuildInfo: set.BuildInfo}
	lsmFactory := lsmintervalprocessor.NewFactory()
	lsmSet.ID = component.NewIDWithName(lsmFactory.Type(), set.ID.Name())
	store, err := lsmFactory.CreateMetrics(ctx, lsmSet, cfg.storeConfig(), sink)
	if err != nil {
		return nil, err
	}
	c, err := newWithStore(set, cfg, store)
	if c != nil {
		c.sink = sink
	}
	return c, err
}

// newWithStore is the connector in front of store (EDOT's lsminterval processor, or a test's).
func newWithStore(set connector.Settings, cfg *Config, store processor.Metrics) (*apmMetrics, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	c := &apmMetrics{
		cfg: cfg, store: store, telemetry: tb, logger: set.Logger, now: time.Now,
		pending: map[string]*pendingSums{},
		stopped: make(chan struct{}),
		sink:    &metricsSink{},
	}
	if cfg.Aggregation != nil {
		c.metaKeys = slices.Sorted(slices.Values(cfg.Aggregation.MetadataKeys))
	}
	instance := ""
	if v, ok := set.Resource.Attributes().Get("service.instance.id"); ok {
		instance = v.Str()
	}
	c.counter = newCounter(cfg.CustomSpanAttributes, cfg.CustomResourceAttributes, instance)
	err = tb.RegisterConnectorApmmetricsPendingSeriesCallback(func(_ context.Context, o metric.Int64Observer) error {
		c.mu.Lock()
		n := 0
		for _, p := range c.pending {
			n += p.n
		}
		c.mu.Unlock()
		o.Observe(int64(n))
		return nil
	})
	return c, err
}

// Start starts the store and the flush loop once, whichever side starts first.
func (c *apmMetrics) Start(ctx context.Context, host component.Host) error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.started {
		return nil
	}
	if !c.sink.isSet() {
		return errNoMetricsToMetrics
	}
	if err := c.store.Start(ctx, host); err != nil {
		return err
	}
	c.started = true
	// The loop outlives Start's context: it ends with Shutdown.
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stopLoop = cancel
	go c.flushLoop(loopCtx)
	return nil
}

// Shutdown hands the pending sums to the store, whose own shutdown exports every open window
// (once: sideDown says which side's shutdown calls it).
func (c *apmMetrics) Shutdown(ctx context.Context) error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.shutDown {
		return nil
	}
	c.shutDown = true
	if c.started {
		c.stopLoop()
		<-c.stopped
	}
	c.mu.Lock()
	c.closed = true
	last := c.takeAllLocked()
	c.mu.Unlock()
	c.flush(ctx, last, reasonShutdown)
	err := c.store.Shutdown(ctx)
	c.telemetry.Shutdown()
	return err
}

// flushLoop flushes just before every multiple of the flush interval, so that what arrived in a
// window reaches the store before the store's own timer ends the window at its edge (only the
// items of the last flushLead of a window may land in the next one, as with EDOT's connector a
// request that is being merged at the edge).
func (c *apmMetrics) flushLoop(ctx context.Context) {
	defer close(c.stopped)
	every := c.cfg.FlushInterval
	timer := time.NewTimer(untilNextFlush(c.now(), every))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		c.flush(ctx, c.takeAll(), reasonInterval)
		timer.Reset(untilNextFlush(c.now(), every))
	}
}

// flushLead is how long before each multiple of the flush interval the loop flushes.
func flushLead(every time.Duration) time.Duration { return min(20*time.Millisecond, every/10) }

// untilNextFlush is the wait from now until flushLead before the next multiple of every.
func untilNextFlush(now time.Time, every time.Duration) time.Duration {
	next := now.Truncate(every).Add(every - flushLead(every))
	if !next.After(now) {
		next = next.Add(every)
	}
	return next.Sub(now)
}

// takeAll removes and returns every pending sum; the caller flushes them.
func (c *apmMetrics) takeAll() []*pendingSums {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.takeAllLocked()
}

func (c *apmMetrics) takeAllLocked() []*pendingSums {
	out := make([]*pendingSums, 0, len(c.pending))
	for k, p := range c.pending {
		out = append(out, p)
		delete(c.pending, k)
	}
	return out
}

// flush merges sums into the store. A store that refuses them (its disk) loses them: logged and
// counted.
func (c *apmMetrics) flush(ctx context.Context, all []*pendingSums, reason attribute.Set) {
	for _, p := range all {
		if p.n == 0 {
			continue
		}
		n := p.n
		md := p.metrics(pcommon.NewTimestampFromTime(c.now()))
		c.telemetry.ConnectorApmmetricsFlushes.Add(ctx, 1, metric.WithAttributeSet(reason))
		if err := c.store.ConsumeMetrics(client.NewContext(ctx, p.info), md); err != nil {
			c.telemetry.ConnectorApmmetricsFlushFailures.Add(ctx, 1)
			c.telemetry.ConnectorApmmetricsLostSeries.Add(ctx, int64(n))
			c.logger.Error("the aggregation store refused the summed metrics; their counts are lost",
				zap.Int("series", n), zap.Error(err))
		}
	}
}

// count runs add on the pending sums of the request's client metadata, under the lock. It flushes
// the last window's sums first when the window changed, and everything after when the sums got too
// many series (both, when a window's first request is itself too large). After the shutdown's
// last flush it counts nothing: the request's items are reported as uncounted instead.
func (c *apmMetrics) count(ctx context.Context, items func() int, add func(*sums)) {
	window := c.now().Truncate(c.shortestInterval())
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.uncounted(ctx, items())
		return
	}
	var rotated, full []*pendingSums
	if !window.Equal(c.window) {
		rotated = c.takeAllLocked()
		c.window = window
	}
	add(c.pendingFor(ctx).sums)
	if c.seriesLocked() >= c.cfg.MaxPendingSeries {
		full = c.takeAllLocked()
	}
	c.mu.Unlock()
	c.flush(ctx, rotated, reasonWindow)
	c.flush(ctx, full, reasonSize)
}

func (c *apmMetrics) seriesLocked() int {
	n := 0
	for _, p := range c.pending {
		n += p.n
	}
	return n
}

func (c *apmMetrics) shortestInterval() time.Duration {
	return c.cfg.intervals()[0]
}

// pendingFor returns the pending sums of the context's client metadata (the metadata_keys' values).
// The metadata kept for the store is copied only when those values are new.
func (c *apmMetrics) pendingFor(ctx context.Context) *pendingSums {
	var key string
	var in client.Info
	if len(c.metaKeys) > 0 {
		in = client.FromContext(ctx)
		var b strings.Builder
		for _, k := range c.metaKeys {
			if vs := in.Metadata.Get(k); len(vs) > 0 {
				b.WriteString(k)
				for _, v := range vs {
					b.WriteByte(0)
					b.WriteString(v)
				}
				b.WriteByte(1)
			}
		}
		key = b.String()
	}
	p, ok := c.pending[key]
	if !ok {
		p = &pendingSums{sums: newSums(), info: c.keptMetadata(in)}
		c.pending[key] = p
	}
	return p
}

// keptMetadata is the client info a flush passes to the store: only the metadata_keys' values.
func (c *apmMetrics) keptMetadata(in client.Info) client.Info {
	if len(c.metaKeys) == 0 {
		return client.Info{}
	}
	kept := map[string][]string{}
	for _, k := range c.metaKeys {
		if vs := in.Metadata.Get(k); len(vs) > 0 {
			kept[k] = vs
		}
	}
	return client.Info{Metadata: client.NewMetadata(kept)}
}

// uncounted reports items that arrived after the shutdown's last flush.
func (c *apmMetrics) uncounted(ctx context.Context, n int) {
	c.telemetry.ConnectorApmmetricsUncountedItems.Add(ctx, int64(n))
	c.logger.Warn("items arrived after the connector's last flush at shutdown; they are not counted in the aggregated metrics",
		zap.Int("items", n))
}

// refusedAfterCounting reports counted items the next consumer then refused (err): their
// client's retry will be counted again.
func (c *apmMetrics) refusedAfterCounting(ctx context.Context, counted int64, err error) {
	if err == nil || counted == 0 {
		return
	}
	c.telemetry.ConnectorApmmetricsRefusedItems.Add(ctx, counted)
	c.logger.Debug("the next consumer refused items already counted; a retry counts them again",
		zap.Int64("items", counted), zap.Error(err))
}

// countTraces counts the spans into the pending sums and returns how many it counted.
func (c *apmMetrics) countTraces(ctx context.Context, td ptrace.Traces) int64 {
	var spans, invalid int64
	c.count(ctx, td.SpanCount, func(s *sums) {
		for _, rs := range td.ResourceSpans().All() {
			res := c.counter.resourcesOf(s, rs.Resource().Attributes())
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					spans++
					if !c.counter.addSpan(s, res, span) {
						invalid++
					}
				}
			}
		}
	})
	c.telemetry.ConnectorApmmetricsSpans.Add(ctx, spans)
	if invalid > 0 {
		c.telemetry.ConnectorApmmetricsInvalidTracestates.Add(ctx, invalid)
		c.logger.Debug("spans with a tracestate that could not be parsed were counted once", zap.Int64("spans", invalid))
	}
	return spans
}

// countLogs counts the log records into the service summary and returns how many it counted.
func (c *apmMetrics) countLogs(ctx context.Context, ld plog.Logs) int64 {
	var n int64
	c.count(ctx, ld.LogRecordCount, func(s *sums) {
		for _, rl := range ld.ResourceLogs().All() {
			res := c.counter.resourcesOf(s, rl.Resource().Attributes())
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					n++
					c.counter.addRecord(s, res, lr.Attributes())
				}
			}
		}
	})
	c.telemetry.ConnectorApmmetricsLogRecords.Add(ctx, n)
	return n
}
