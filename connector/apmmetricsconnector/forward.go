package apmmetricsconnector

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// tracesForwarder is the traces to traces side (forward: true): it counts the spans, then hands
// them on. It counts first because the next consumer may take the batch over (the buffer does).
type tracesForwarder struct {
	*shared
	next consumer.Traces
}

func (f *tracesForwarder) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	f.countTraces(ctx, td)
	return f.next.ConsumeTraces(ctx, td)
}

// Capabilities are the next consumer's: the batch is its once counted, so a pipeline with no
// other exporter hands it over uncopied.
func (f *tracesForwarder) Capabilities() consumer.Capabilities { return f.next.Capabilities() }

// logsForwarder is the logs to logs side (forward: true).
type logsForwarder struct {
	*shared
	next consumer.Logs
}

func (f *logsForwarder) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	f.countLogs(ctx, ld)
	return f.next.ConsumeLogs(ctx, ld)
}

func (f *logsForwarder) Capabilities() consumer.Capabilities { return f.next.Capabilities() }

// metricsForwarder is the metrics to metrics side with forward: true. It hands the metrics it is
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
func (c *apmMetrics) addSide(side string) {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	c.created++
	if !slices.Contains(c.sides, side) {
		c.sides = append(c.sides, side)
	}
}

// sideDown is one side's shutdown; the last flush waits for the last side that can still be
// given items while the pipeline behind the metrics runs. The collector stops a component only
// after everything in front of it: without forward every side is in front of the metrics'
// pipelines, so the last side to stop; with forward only the metrics to metrics side is, so that
// one (items a traces or logs side is given after it are reported as uncounted).
func (c *apmMetrics) sideDown(ctx context.Context, side string) error {
	c.lifeMu.Lock()
	c.down++
	last := c.down >= c.created || (c.cfg.Forward && side == metricsToMetrics)
	c.lifeMu.Unlock()
	if !last {
		return nil
	}
	return c.Shutdown(ctx)
}

// sidesErr says why the sides the pipelines made do not fit the forward setting: a side that
// hands nothing on with forward (it would end the pipeline that should go on), a side that hands
// on without it, or no side for the aggregated metrics.
func (c *apmMetrics) sidesErr() error {
	for _, side := range c.sides {
		switch {
		case c.cfg.Forward && (side == tracesToMetrics || side == logsToMetrics):
			return fmt.Errorf("with forward: true the connector hands on what it counts, so it cannot be used %s: "+
				"make it an exporter of the traces and logs pipelines and a receiver of the pipelines that store them", side)
		case !c.cfg.Forward && (side == tracesToTraces || side == logsToLogs):
			return fmt.Errorf("the connector is used %s, which hands the items on: set forward: true", side)
		}
	}
	if c.cfg.Forward && !slices.Contains(c.sides, metricsToMetrics) {
		return fmt.Errorf("with forward: true the aggregated metrics leave through the metrics to metrics side: " +
			"make the connector an exporter of a metrics pipeline and a receiver of the metrics pipeline that stores them")
	}
	return nil
}
