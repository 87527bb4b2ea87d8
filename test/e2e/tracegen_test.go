package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// TestTracegenEveryProtocolArrives is the benchmark suite's correctness check: a short
// tracegen run (10 clients x 50 requests x 10 spans) per protocol through bin/tracegate with
// configs/default.yaml, and every span must reach Elasticsearch exactly once. It never looks at
// speed.
func TestTracegenEveryProtocolArrives(t *testing.T) {
	g := startGateway(t, "default.yaml")
	targets := map[string]string{
		loadgen.OTLPGRPC: g.endpoints.OTLPGRPC, loadgen.OTLPHTTP: g.endpoints.OTLPHTTP,
		loadgen.ZipkinJSON: g.endpoints.Zipkin, loadgen.ZipkinProto: g.endpoints.Zipkin,
		loadgen.JaegerThriftHTTP: g.endpoints.JaegerHTTP, loadgen.JaegerUDPCompact: g.endpoints.JaegerCompact,
		loadgen.DDTraceV04: g.endpoints.DDTrace, loadgen.DDTraceV05: g.endpoints.DDTrace,
		loadgen.ElasticAPMIntake: g.endpoints.ElasticAPM,
	}
	const clients, requests, spans = 10, 50, 10
	for _, protocol := range loadgen.Protocols() {
		t.Run(protocol, func(t *testing.T) {
			cfg := loadgen.Config{
				Protocol: protocol, Target: targets[protocol], Concurrency: clients, Requests: requests,
				Spans: spans, Service: "tracegen-" + protocol,
				// One pooled payload per request: every span id is distinct too, so duplicates show.
				PoolSize: clients * requests,
			}
			if protocol == loadgen.JaegerUDPCompact {
				// UDP has no flow control: an unpaced burst overflows the socket buffer and is lost
				// by design, which is not what this test is about.
				cfg.Rate = 100
			}
			res, err := loadgen.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != clients*requests || res.SpansSent != clients*requests*spans {
				t.Fatalf("sent %d requests, %d spans", res.Requests, res.SpansSent)
			}
			if res.Status.OK != res.Requests || res.SpansAcked != res.SpansSent {
				t.Fatalf("not every request was accepted: %+v, errors %v", res.Status, res.Errors)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err = g.es.WaitUntil(ctx, func(st esstandin.Stats) bool { return st.SpansByService[cfg.Service] >= res.SpansSent })
			if got := g.es.Stats().SpansByService[cfg.Service]; err != nil || got != res.SpansSent {
				t.Fatalf("%d of %d spans of %s reached Elasticsearch (%v)", got, res.SpansSent, cfg.Service, err)
			}
		})
	}
	// Every request had its own payload (span ids) and trace id: no span document may be there twice.
	if d := g.es.Stats().DuplicateSpans; d != 0 {
		t.Errorf("%d duplicate span documents", d)
	}
}
