package ddtracereceiver

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/obfuscation"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// obfuscationBodies are v0.4 bodies of tracegen's traces (10 spans: a web server span, database,
// HTTP client and template spans, as Datadog's integrations type them). With literals, every
// statement of a body carries ids of its own, as a service that does not bind its parameters
// sends them (the bodies repeat across iterations, so the cached run still hits: the run without
// the cache is what a statement never seen before costs).
func obfuscationBodies(b *testing.B, literals bool) (bodies [][]byte, spans int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Unix(1_700_000_000, 0)
	for range 64 {
		t := tracemodel.NewTrace(r, "checkout", 10, now)
		for i := range t.Spans {
			for j, a := range t.Spans[i].Attrs {
				if a.Key == "db.statement" && literals {
					t.Spans[i].Attrs[j].Str = fmt.Sprintf("SELECT id, status FROM orders WHERE id = %d AND owner = 'user-%d'", r.IntN(1<<30), r.IntN(1<<20))
					t.Spans[i].Resource = t.Spans[i].Attrs[j].Str
				}
			}
		}
		bodies = append(bodies, tracemodel.EncodeDDTraceV04([][]tracemodel.DDSpan{tracemodel.DDSpans(t, 1, false)}))
		spans += len(t.Spans)
	}
	return bodies, spans
}

// BenchmarkObfuscation measures decoding, obfuscation and the semconv translation of tracegen's
// traces with obfuscation off and on (the default, its statement cache started as the receiver
// starts it; and without the cache), in µs per span: the difference is what obfuscation costs.
func BenchmarkObfuscation(b *testing.B) {
	off := obfuscation.DefaultConfig()
	off.Enabled = false
	noCache := obfuscation.DefaultConfig()
	noCache.Cache.Enabled = false
	for _, literals := range []bool{false, true} {
		bodies, spans := obfuscationBodies(b, literals)
		for _, c := range []struct {
			name string
			cfg  obfuscation.Config
		}{{"off", off}, {"on", obfuscation.DefaultConfig()}, {"on-nocache", noCache}} {
			name := "tracegen/" + c.name
			if literals {
				name = "tracegen-literals/" + c.name
			}
			b.Run(name, func(b *testing.B) {
				o := obfuscation.New(c.cfg)
				o.Start()
				defer o.Shutdown()
				tr := translator.New(translator.Options{TraceIDCacheSize: 1000})
				b.ReportAllocs()
				for b.Loop() {
					for _, body := range bodies {
						p, err := payload.DecodeTracesMsgpack(body)
						if err != nil {
							b.Fatal(err)
						}
						ps := []payload.Payload{p}
						o.Payloads(ps)
						tr.ToTraces(ps, translator.Headers{Lang: "go"})
						p.Release()
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*spans), "µs/span")
			})
		}
	}
}
