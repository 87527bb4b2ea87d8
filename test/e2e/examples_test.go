package e2e

// The overlays in configs/examples: they keep the base pipeline, and one of them, run through the
// binary, does what its header says.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.yaml.in/yaml/v3"
)

// pipelineConfig is the part of a config file the examples' check reads.
type pipelineConfig struct {
	Processors map[string]any `yaml:"processors"`
	Service    struct {
		Pipelines map[string]struct {
			Processors []string `yaml:"processors"`
		} `yaml:"pipelines"`
	} `yaml:"service"`
}

func loadPipelineConfig(t *testing.T, path string) pipelineConfig {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c pipelineConfig
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// TestExamplesKeepTheBasePipeline: an example replaces the traces pipeline's processor list (the
// collector replaces lists), so it must repeat configs/default.yaml's list with its own processors
// between memory_limiter and the buffer; a processor added to the base and not to an example
// would silently leave the pipeline whenever that example is used.
func TestExamplesKeepTheBasePipeline(t *testing.T) {
	base := loadPipelineConfig(t, filepath.Join(repoRoot, "configs", "default.yaml")).Service.Pipelines["traces"].Processors
	examples, err := filepath.Glob(filepath.Join(repoRoot, "configs", "examples", "*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, path := range examples {
		ex := loadPipelineConfig(t, path)
		got := ex.Service.Pipelines["traces"].Processors
		rest := slices.DeleteFunc(slices.Clone(got), func(p string) bool { _, own := ex.Processors[p]; return own })
		if len(ex.Processors) == 0 || !slices.Equal(rest, base) || got[0] != "memory_limiter" || got[len(got)-1] != "buffer" {
			t.Errorf("%s: traces processors %v: want the base's %v with the example's own processors after memory_limiter",
				filepath.Base(path), got, base)
		}
	}
}

// TestDropHealthChecksExample runs configs/examples/drop-health-checks.yaml: of two spans sent in
// one request, the one on a health-check route is dropped and the other stored.
func TestDropHealthChecksExample(t *testing.T) {
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"examples/drop-health-checks.yaml"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, route := range []string{"/healthz", "/orders/{id}"} {
		s := spans.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{0xe8, byte(i + 1)})
		s.SetSpanID(pcommon.SpanID{0xe8, byte(i + 1)})
		s.SetName("GET " + route)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		s.Attributes().PutStr("http.route", route)
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if status := postSpans(ctx, t, g.endpoints.OTLPHTTP, body); status != 200 {
		t.Fatalf("OTLP/HTTP answered %d", status)
	}
	if err := g.es.WaitForSpans(ctx, 1); err != nil {
		t.Fatal(err)
	}
	g.stopAndFlush(t) // nothing can arrive later
	var stored []string
	for _, d := range g.es.Documents() {
		stored = append(stored, d.SpanID)
	}
	if want := spans.At(1).SpanID().String(); !slices.Equal(stored, []string{want}) {
		t.Errorf("stored span ids %v, want only %s (the /orders/{id} span)", stored, want)
	}
}
