package ddtracereceiver

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/xconfmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/internal/configtest"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/chunkfilter"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadatatest"
)

// loadFilters is the named ddtrace section of testdata/filters.yaml.
func loadFilters(t *testing.T, name string) *Config {
	t.Helper()
	return configtest.Load(t, filepath.Join("testdata", "filters.yaml"), component.NewIDWithName(metadata.Type, name), createDefaultConfig().(*Config))
}

func TestFiltersConfig(t *testing.T) {
	cfg := loadFilters(t, "filters")
	require.NoError(t, xconfmap.Validate(cfg))
	assert.Equal(t, chunkfilter.Config{
		IgnoreResources: []string{"^GET /health$", "(?i)ping"},
		FilterTags:      chunkfilter.TagRules{Require: []string{"env:prod"}, Reject: []string{"http.useragent:kube-probe/1.30", "synthetics"}},
		FilterTagsRegex: chunkfilter.TagRules{Reject: []string{"http.url:/internal/"}},
	}, cfg.Filters)

	require.EqualError(t, xconfmap.Validate(loadFilters(t, "bad_regex")),
		"ignore_resources: \"GET /(health\": error parsing regexp: missing closing ): `GET /(health`")
	assert.Empty(t, createDefaultConfig().(*Config).Filters, "no filter by default")
}

// filterTrace is a v0.4 trace of a root (resource, meta) and one child, under traceID.
func filterTrace(traceID int, resource string, meta map[string]any) []any {
	root := ddSpan(1, "web", resource, meta)
	child := ddSpan(2, "sql", "SELECT ?", nil)
	child["parent_id"] = json.Number("1")
	for _, s := range []map[string]any{root, child} {
		s["trace_id"] = json.Number(strconv.Itoa(traceID))
	}
	return []any{root, child}
}

// TestFiltersDropChunksByTheirRoot: a request of traces the filters keep and drop; the kept ones
// reach the pipeline whole, the others are counted per reason, as chunks and as dropped spans.
func TestFiltersDropChunksByTheirRoot(t *testing.T) {
	set, tel, _ := observedSettings(t)
	sink := new(consumertest.TracesSink)
	r, err := newReceiver(loadFilters(t, "filters"), set, sink)
	require.NoError(t, err)

	prod := map[string]any{"env": "prod"}
	body, err := appendMsgpack(nil, []any{
		filterTrace(1, "GET /users", prod),                                                  // kept
		filterTrace(2, "GET /health", prod),                                                 // ignore_resources
		filterTrace(3, "PING", prod),                                                        // ignore_resources, case-insensitive
		filterTrace(4, "GET /users", map[string]any{"env": "prod", "synthetics": "x"}),      // reject by key
		filterTrace(5, "GET /users", map[string]any{"env": "staging"}),                      // require env:prod
		filterTrace(6, "GET /users", nil),                                                   // require env:prod
		filterTrace(7, "GET /a", map[string]any{"env": "prod", "http.url": "/internal/x"}),  // reject regex
		filterTrace(8, "GET /b", map[string]any{"env": "prod", "http.useragent": "curl/8"}), // kept
	}, false)
	require.NoError(t, err)
	rec := serve(t, r, "PUT", "/v0.4/traces", body, nil)
	require.Equal(t, 200, rec.Code, rec.Body.String())

	require.Len(t, sink.AllTraces(), 1)
	td := sink.AllTraces()[0]
	assert.Equal(t, 4, td.SpanCount(), "the two kept traces, each whole")
	resources := map[string]bool{}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		if spans.At(i).ParentSpanID().IsEmpty() {
			v, _ := spans.At(i).Attributes().Get("resource.name")
			resources[v.Str()] = true
		}
	}
	assert.Equal(t, map[string]bool{"GET /users": true, "GET /b": true}, resources)

	reason := func(r chunkfilter.Reason) attribute.KeyValue { return attribute.String("reason", r.String()) }
	metadatatest.AssertEqualReceiverDdtraceChunksFiltered(t, tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(reason(chunkfilter.IgnoredResource)), Value: 2},
		{Attributes: attribute.NewSet(reason(chunkfilter.RejectedTag)), Value: 2},
		{Attributes: attribute.NewSet(reason(chunkfilter.MissingRequiredTag)), Value: 2},
	}, metricdatatest.IgnoreTimestamp())
	dropped := func(r chunkfilter.Reason, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("endpoint", "v0.4"), reason(r)), Value: n}
	}
	metadatatest.AssertEqualReceiverDdtraceSpansDropped(t, tel, []metricdata.DataPoint[int64]{
		dropped(chunkfilter.IgnoredResource, 4), dropped(chunkfilter.RejectedTag, 4), dropped(chunkfilter.MissingRequiredTag, 4),
	}, metricdatatest.IgnoreTimestamp())
	// What the pipeline took is the standard receiver metric's.
	accepted, err := tel.GetMetric("otelcol_receiver_accepted_spans")
	require.NoError(t, err)
	assert.Equal(t, int64(4), sumInt(t, accepted))
}

// TestFilteredChunksAreNotRated: rate_by_service counts only what the filters keep, as the agent
// runs its samplers after them.
func TestFilteredChunksAreNotRated(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.RateByService.Enabled, cfg.RateByService.TargetTracesPerSecond = true, 1
	cfg.Filters.IgnoreResources = []string{"."}
	r, clock := rateReceiverWith(t, cfg)
	for range 2 {
		require.Equal(t, 200, serve(t, r, "PUT", "/v0.4/traces", prioTraces("busy", 1, 100), nil).Code)
		clock.now = clock.now.Add(5 * time.Second)
	}
	assert.JSONEq(t, `{"rate_by_service":{}}`, string(r.rates.Reply().Body), "nothing counted, no rate")
}

// TestAllFilteredAnswersOK: a request whose every chunk is filtered out is answered as taken.
func TestAllFilteredAnswersOK(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Filters.IgnoreResources = []string{"."}
	sink := new(consumertest.TracesSink)
	r := newTestReceiver(t, cfg, sink)
	rec := serve(t, r, "PUT", "/v0.4/traces", v04Body("x", 1, 3), nil)
	assert.Equal(t, 200, rec.Code, rec.Body.String())
	assert.Zero(t, sink.SpanCount())
}
