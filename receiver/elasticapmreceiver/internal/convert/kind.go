// Span kinds for events that carry none: most agents send no OpenTelemetry kind (only their
// OpenTelemetry bridges do), and EDOT leaves such spans unspecified, unlike every other protocol's.

package convert

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/elastic/apm-data/model/modelpb"
)

// inferKind is the kind APM Server's OTLP intake would have made the event from: SERVER spans
// become "request" transactions and CONSUMER ones "messaging" (apm-data input/otlp), CLIENT spans
// exit spans (with a destination, or of a type that calls out), PRODUCER spans sent messages. Other transactions stay unspecified.
func inferKind(event *modelpb.APMEvent) ptrace.SpanKind {
	if event.Type() == modelpb.TransactionEventType {
		switch event.GetTransaction().GetType() {
		case "request", "page-load", "route-change":
			return ptrace.SpanKindServer
		case "messaging":
			return ptrace.SpanKindConsumer
		}
		return ptrace.SpanKindUnspecified
	}
	span := event.GetSpan()
	if span.GetType() == "messaging" {
		switch span.GetAction() {
		case "send", "publish":
			return ptrace.SpanKindProducer
		case "receive", "poll":
			return ptrace.SpanKindConsumer
		}
	}
	switch {
	case span.GetDestinationService().GetResource() != "", event.GetService().GetTarget() != nil,
		event.GetDestination() != nil:
		return ptrace.SpanKindClient
	case span.GetType() == "db", span.GetType() == "external", span.GetType() == "storage":
		// Elastic's types of calls out of the process: a database, another service, a store.
		return ptrace.SpanKindClient
	}
	return ptrace.SpanKindInternal
}
