package apmmetricsconnector

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// tracesForwarder is the traces to traces side: it counts the spans, then hands
// them on. It counts first because the next consumer may take the batch over (the buffer does).
type tracesForwarder struct {
	*shared
	next consumer.Traces
}

func (f *tracesForwarder) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	counted := f.countTraces(ctx, td)
	err := f.next.ConsumeTraces(ctx, td)
	f.refusedAfterCounting(ctx, counted, err)
	return err
}

// Capabilities are the next consumer's: the batch is its once counted, so a pipeline with no
// other exporter hands it over uncopied.
func (f *tracesForwarder) Capabilities() consumer.Capabilities { return f.next.Capabilities() }

// logsForwarder is the logs to logs side.
type logsForwarder struct {
	*shared
	next consumer.Logs
}

func (f *logsForwarder) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	counted := f.countLogs(ctx, ld)
	err := f.next.ConsumeLogs(ctx, ld)
	f.refusedAfterCounting(ctx, counted, err)
	return err
}

func (f *logsForwarder) Capabilities() consumer.Capabilities { return f.next.Capabilities() }

// metricsForwarder is the metrics to metrics side. It hands the metrics it is
// given on uncounted (application metrics would make hosts and pods services), and the store
// exports the aggregated metrics to the same next consumer.
type metricsForwarder struct {
	*shared
	next consumer.Metrics
}

func (f *metricsForwarder) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return f.next.ConsumeMetrics(ctx, md)
}

func (f *metricsForwarder) Capabilities() consumer.Capabilities { return f.next.Capabilities() }

// addSide records that a side of this connector was created.
func (c *apmMetrics) addSide() {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	c.created++
}

// sideDown is one side's shutdown. The last flush is the metrics to metrics side's: the
// collector stops a component only after everything in front of it, and that side is the last
// one in front of the pipeline that stores the metrics (items a traces or logs side is given
// after it are counted as uncounted and logged). Without that side, the last side's.
func (c *apmMetrics) sideDown(ctx context.Context, side string) error {
	c.lifeMu.Lock()
	c.down++
	last := c.down >= c.created || side == metricsToMetrics
	c.lifeMu.Unlock()
	if !last {
		return nil
	}
	return c.Shutdown(ctx)
}

var errNoMetricsToMetrics = errors.New("the aggregated metrics leave through the metrics to metrics side: " +
	"make the connector an exporter of a metrics pipeline and a receiver of the metrics pipeline that stores them")
