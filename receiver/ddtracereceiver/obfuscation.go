package ddtracereceiver

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/obfuscation"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// ruleAttrs are the rule attribute of otelcol.receiver.ddtrace.spans.obfuscated, built once.
var ruleAttrs = func() (a [obfuscation.NumRules]metric.AddOption) {
	for r := range obfuscation.NumRules {
		a[r] = metric.WithAttributes(attribute.String("rule", r.String()))
	}
	return a
}()

// obfuscate applies the obfuscation rules to a request's decoded spans, before they are
// translated (a re-offer translates them again, obfuscated already), and counts what the rules
// did once per request.
func (r *ddReceiver) obfuscate(ctx context.Context, payloads []payload.Payload) {
	c := r.obfuscator.Payloads(payloads)
	for rule, n := range c.Spans {
		if n > 0 {
			r.telemetry.ReceiverDdtraceSpansObfuscated.Add(ctx, n, ruleAttrs[rule])
		}
	}
	if c.UnparsableSQL > 0 {
		r.telemetry.ReceiverDdtraceSpansUnparsableSQL.Add(ctx, c.UnparsableSQL)
	}
}
