package tracesamplingprocessor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadata"
)

// reason is the rule that decided a trace, the reason attribute of the processor's metrics.
type reason uint8

const (
	reasonNone                 reason = iota // no rule applied: passed on, not counted
	reasonUnsampledTransaction               // elastic: an agent's unsampled transaction
	reasonCloseResource                      // datakit.close_resource matched a span
	reasonUserReject                         // datadog: priority below 0
	reasonAutoReject                         // datadog: priority 0, no sampler kept it
	reasonPriority                           // datadog: priority 1 or more
	reasonErrorSampler                       // datadog: priority 0 kept by the error sampler
	reasonRareSampler                        // datadog: kept by the rare sampler
	reasonError                              // datakit: a trace with an error span bypasses the rest
	reasonOmitErrStatus                      // datakit.omit_err_status matched a web span
	reasonRareResource                       // datakit.keep_rare_resource
	reasonUserKeep                           // datakit: a user-kept Datadog trace bypasses the sampler
	reasonSamplingRate                       // datakit.sampling_rate
	numReasons
)

var reasonNames = [numReasons]string{
	reasonNone:                 "none",
	reasonUnsampledTransaction: "unsampled_transaction",
	reasonCloseResource:        "close_resource",
	reasonUserReject:           "priority_user_reject",
	reasonAutoReject:           "priority_auto_reject",
	reasonPriority:             "priority",
	reasonErrorSampler:         "error_sampler",
	reasonRareSampler:          "rare_sampler",
	reasonError:                "error",
	reasonOmitErrStatus:        "omit_err_status",
	reasonRareResource:         "rare_resource",
	reasonUserKeep:             "user_keep",
	reasonSamplingRate:         "sampling_rate",
}

func (r reason) String() string { return reasonNames[r] }

// counts gathers one request's decisions, recorded once per reason: a metric update per trace
// would cost more than the decision.
type counts struct {
	traces       [2][numReasons]int64 // [kept?1:0][reason]
	spansDropped [numReasons]int64
}

func (c *counts) add(keep bool, r reason, spans int) {
	if r == reasonNone {
		return
	}
	if keep {
		c.traces[1][r]++
		return
	}
	c.traces[0][r]++
	c.spansDropped[r] += int64(spans)
}

// recorder holds the attribute sets of every (decision, reason), built once.
type recorder struct {
	tb       *metadata.TelemetryBuilder
	traceSet [2][numReasons]metric.MeasurementOption
	spanSet  [numReasons]metric.MeasurementOption
}

func newRecorder(tb *metadata.TelemetryBuilder) *recorder {
	r := &recorder{tb: tb}
	for rs := reason(1); rs < numReasons; rs++ {
		name := attribute.String("reason", rs.String())
		r.traceSet[0][rs] = metric.WithAttributeSet(attribute.NewSet(attribute.String("decision", "dropped"), name))
		r.traceSet[1][rs] = metric.WithAttributeSet(attribute.NewSet(attribute.String("decision", "kept"), name))
		r.spanSet[rs] = metric.WithAttributeSet(attribute.NewSet(name))
	}
	return r
}

func (r *recorder) record(ctx context.Context, c *counts) {
	for rs := reason(1); rs < numReasons; rs++ {
		for k := range 2 {
			if n := c.traces[k][rs]; n > 0 {
				r.tb.ProcessorTracesamplingTraces.Add(ctx, n, r.traceSet[k][rs])
			}
		}
		if n := c.spansDropped[rs]; n > 0 {
			r.tb.ProcessorTracesamplingSpansDropped.Add(ctx, n, r.spanSet[rs])
		}
	}
}
