package convert

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/elastic/apm-data/model/modelpb"
)

func TestInferKind(t *testing.T) {
	transaction := func(typ string) *modelpb.APMEvent {
		return &modelpb.APMEvent{Transaction: &modelpb.Transaction{Type: typ}}
	}
	span := func(s *modelpb.Span, target *modelpb.ServiceTarget) *modelpb.APMEvent {
		return &modelpb.APMEvent{Span: s, Service: &modelpb.Service{Target: target}}
	}
	for _, tc := range []struct {
		name  string
		event *modelpb.APMEvent
		want  ptrace.SpanKind
	}{
		{"request transaction", transaction("request"), ptrace.SpanKindServer},
		{"RUM page load", transaction("page-load"), ptrace.SpanKindServer},
		{"messaging transaction", transaction("messaging"), ptrace.SpanKindConsumer},
		{"other transaction", transaction("scheduled"), ptrace.SpanKindUnspecified},
		{"http exit span", span(&modelpb.Span{Type: "external", DestinationService: &modelpb.DestinationService{Resource: "api:443"}}, nil), ptrace.SpanKindClient},
		{"db span with a target", span(&modelpb.Span{Type: "db"}, &modelpb.ServiceTarget{Type: "postgresql"}), ptrace.SpanKindClient},
		{"message sent", span(&modelpb.Span{Type: "messaging", Action: "send"}, &modelpb.ServiceTarget{Type: "kafka"}), ptrace.SpanKindProducer},
		{"message received", span(&modelpb.Span{Type: "messaging", Action: "receive"}, nil), ptrace.SpanKindConsumer},
		{"internal span", span(&modelpb.Span{Type: "app", Subtype: "internal"}, nil), ptrace.SpanKindInternal},
		{"db span without a target", span(&modelpb.Span{Type: "db", Subtype: "postgresql"}, nil), ptrace.SpanKindClient},
		{"http span with only an address", &modelpb.APMEvent{Span: &modelpb.Span{Type: "app"}, Destination: &modelpb.Destination{Address: "prices", Port: 8080}}, ptrace.SpanKindClient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, inferKind(tc.event))
		})
	}
}
