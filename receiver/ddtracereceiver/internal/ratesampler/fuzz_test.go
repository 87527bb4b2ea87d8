package ratesampler

import (
	"encoding/json"
	"testing"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// FuzzTable: whatever service and env names a tracer sends, the table is valid JSON that tracers
// can read, with a rate for the pair (its names cut to the agent's limits) and the default.
func FuzzTable(f *testing.F) {
	for _, seed := range [][2]string{
		{"shop", "prod"}, {"", ""}, {"", "none"}, {`a"b\c`, "\x00\n"}, {"\xff\xfe", "é"}, {"<svc>&", "service:,env:"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, service, env string) {
		s := newSampler(10, 100)
		span := payload.Span{Service: service, SpanID: 1, Meta: []payload.KV{{Key: "env", Value: env}}}
		p := []payload.Payload{{Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{span}}}}}
		s.Count(bucket(0), p, 0)
		s.Count(bucket(1), p, 0)
		var body struct {
			Rates map[string]float64 `json:"rate_by_service"`
		}
		if err := json.Unmarshal(s.Reply().Body, &body); err != nil {
			t.Fatalf("%q: %v", s.Reply().Body, err)
		}
		if _, ok := body.Rates["service:,env:"]; !ok {
			t.Fatalf("no default rate in %q", s.Reply().Body)
		}
		if len(body.Rates) < 2 && service != "" {
			t.Fatalf("no rate for %q/%q in %q", service, env, s.Reply().Body)
		}
	})
}
