package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/essetup"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

// TestElasticsearchVersions runs each documented path through the binary against a stand-in that
// claims that version and behaves as it does (templates by version, require_data_stream refused
// before 8.12): tracegate-es-setup's work first, then traces over OTLP and ddtrace, then the
// documents each mapping must produce.
func TestElasticsearchVersions(t *testing.T) {
	// Plain indices are daily (tracegate-traces-YYYY.MM.DD): a run across midnight UTC writes to
	// two, so the plain cases name the prefix and count every day's index.
	const daily = "tracegate-traces-*"
	for _, tt := range []struct {
		name      string
		version   string
		overlays  []string
		setupMode string
		index     string            // where spans must land
		fields    map[string]string // document field → JSON kind it must have ("string", "number")
	}{
		{
			"8.17 otel (default)", "8.17.0", nil, "otel", "traces-generic.otel-default",
			map[string]string{"trace_id": "string", "span_id": "string", "duration": "number", "resource.attributes.service.name": "string"},
		},
		{
			"8.13 ecs", "8.13.4",
			[]string{"elasticsearch/ecs.yaml"},
			"ecs", "traces-generic-default",
			map[string]string{"trace.id": "string", "span.id": "string", "span.duration.us": "number", "service.name": "string"},
		},
		{
			"8.5 plain", "8.5.3",
			[]string{"elasticsearch/plain.yaml"},
			"plain", daily,
			map[string]string{"TraceId": "string", "SpanId": "string", "Duration": "number", "Resource.service.name": "string"},
		},
		{
			"7.17 plain", "7.17.25",
			[]string{"elasticsearch/plain.yaml"},
			"plain", daily,
			map[string]string{"TraceId": "string", "SpanId": "string", "Duration": "number", "Resource.service.name": "string"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := startGatewayWith(t, gatewayOptions{
				config: "default.yaml", overlays: tt.overlays, esVersion: tt.version,
				beforeRun: func(t *testing.T, es *esstandin.Server) {
					if _, err := essetup.Run(context.Background(), essetup.Options{URLs: []string{es.URL()}, Mode: tt.setupMode}); err != nil {
						t.Fatalf("tracegate-es-setup --mode %s: %v", tt.setupMode, err)
					}
				},
			})
			var sent []tracesend.Span
			for _, p := range tracesend.Protocols() {
				if p.Name != "otlp-grpc" && p.Name != "ddtrace-v0.4" {
					continue
				}
				spans, err := p.Send(context.Background(), g.endpoints, "versions-"+p.Name, 9)
				if err != nil {
					t.Fatalf("%s: %v", p.Name, err)
				}
				sent = append(sent, spans...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			inIndex := func(index string) bool {
				if prefix, ok := strings.CutSuffix(tt.index, "*"); ok {
					_, err := time.Parse("2006.01.02", strings.TrimPrefix(index, prefix))
					return strings.HasPrefix(index, prefix) && err == nil
				}
				return index == tt.index
			}
			spansIn := func(st esstandin.Stats) int {
				n := 0
				for index, docs := range st.ByIndex {
					if inIndex(index) {
						n += docs
					}
				}
				return n
			}
			if err := g.es.WaitUntil(ctx, func(st esstandin.Stats) bool { return spansIn(st) >= len(sent) }); err != nil {
				t.Fatalf("%v; stats %+v", err, g.es.Stats())
			}
			if st := g.es.Stats(); st.RejectedItems != 0 {
				t.Errorf("rejected items: %v", st.RejectedReasons)
			}
			for _, d := range g.es.Documents() {
				if !inIndex(d.Index) {
					continue
				}
				var doc map[string]any
				if err := json.Unmarshal(d.Source, &doc); err != nil {
					t.Fatal(err)
				}
				for path, kind := range tt.fields {
					v, ok := lookup(doc, path)
					if !ok {
						t.Errorf("document in %s lacks %s: %s", d.Index, path, d.Source)
						continue
					}
					if got := jsonKind(v); got != kind {
						t.Errorf("%s is a %s, want a %s", path, got, kind)
					}
				}
			}
		})
	}
}

// TestECSWithoutSetupIsRejected shows why the setup step exists: on 8.13 no template matches the
// ECS data stream, so Elasticsearch rejects every span (and the exporter counts them as failed).
func TestECSWithoutSetupIsRejected(t *testing.T) {
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/ecs.yaml"}, esVersion: "8.13.4"})
	if _, err := tracesend.Protocols()[0].Send(context.Background(), g.endpoints, "no-setup", 6); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.es.WaitUntil(ctx, func(st esstandin.Stats) bool { return st.RejectedItems >= 6 }); err != nil {
		t.Fatal(err)
	}
	if st := g.es.Stats(); st.Documents != 0 || st.RejectedReasons["index_not_found_exception"] != 6 {
		t.Errorf("want 6 spans rejected with index_not_found_exception, got %+v", st)
	}
}

// lookup finds a dotted path, whether the document nests it or keeps dots in a key.
func lookup(doc map[string]any, path string) (any, bool) {
	if v, ok := doc[path]; ok {
		return v, true
	}
	parts := strings.Split(path, ".")
	for i := 1; i < len(parts); i++ {
		if sub, ok := doc[strings.Join(parts[:i], ".")].(map[string]any); ok {
			if v, ok := lookup(sub, strings.Join(parts[i:], ".")); ok {
				return v, true
			}
		}
	}
	return nil, false
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case map[string]any:
		return "object"
	}
	return "other"
}
