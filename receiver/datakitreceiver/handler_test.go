package datakitreceiver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/jaegertracing/jaeger-idl/thrift-gen/jaeger"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin/zipkinv2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/receiver/datakitreceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/datakitreceiver/internal/metadatatest"
)

// sinks are the pipelines a test receiver hands its data to; a nil one means no such pipeline.
type sinks struct {
	traces  consumer.Traces
	metrics consumer.Metrics
	logs    consumer.Logs
}

// startReceiver runs a receiver with cfg on a free loopback port and returns its base URL.
func startReceiver(t *testing.T, cfg *Config, s sinks, set receiver.Settings) string {
	t.Helper()
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	r, err := newReceiver(cfg, set)
	require.NoError(t, err)
	r.next.Traces, r.next.Metrics, r.next.Logs = s.traces, s.metrics, s.logs
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return "http://" + r.addr
}

func post(t *testing.T, url, contentType string, body []byte) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// jaegerBatch is a Thrift binary batch of two spans of "jaeger-svc", a parent and a failing child.
func jaegerBatch(t *testing.T) []byte {
	t.Helper()
	isErr := true
	batch := &jaeger.Batch{
		Process: &jaeger.Process{ServiceName: "jaeger-svc"},
		Spans: []*jaeger.Span{
			{TraceIdLow: 7, TraceIdHigh: 1, SpanId: 1, OperationName: "GET /orders", StartTime: 1_700_000_000_000_000, Duration: 1500},
			{
				TraceIdLow: 7, TraceIdHigh: 1, SpanId: 2, ParentSpanId: 1, OperationName: "SELECT orders", StartTime: 1_700_000_000_000_100, Duration: 900,
				Tags: []*jaeger.Tag{{Key: "error", VType: jaeger.TagType_BOOL, VBool: &isErr}},
			},
		},
	}
	b, err := thrift.NewTSerializer().Write(context.Background(), batch)
	require.NoError(t, err)
	return b
}

const (
	zipkinV2JSON = `[{"traceId":"5af7183fb1d4cf5f","id":"6b221d5bc9e6496c","name":"get /api","timestamp":1556604172355737,` +
		`"duration":1431,"kind":"SERVER","localEndpoint":{"serviceName":"zipkin-svc"},"tags":{"http.method":"GET"}}]`
	zipkinV1JSON = `[{"traceId":"5af7183fb1d4cf5f","id":"6b221d5bc9e6496c","name":"get","timestamp":1556604172355737,"duration":1431,` +
		`"annotations":[{"timestamp":1556604172355737,"value":"sr","endpoint":{"serviceName":"zipkin-v1"}}]}]`
	ddtraceJSON = `[[{"trace_id":1,"span_id":2,"name":"web.request","resource":"GET /","service":"dd-svc","start":1700000000000000000,"duration":1000}]]`
)

// oneTrace is a one-span trace of service.
func oneTrace(service string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetTraceID(pcommon.TraceID{1, 2, 3})
	s.SetSpanID(pcommon.SpanID{4, 5, 6})
	s.SetName("op")
	s.SetStartTimestamp(1_700_000_000_000_000_000)
	s.SetEndTimestamp(1_700_000_000_001_000_000)
	return td
}

func zipkinV2Proto(t *testing.T) []byte {
	t.Helper()
	b, err := zipkinv2.NewProtobufTracesMarshaler().MarshalTraces(oneTrace("zipkin-proto"))
	require.NoError(t, err)
	return b
}

func otlpTraces(t *testing.T, asJSON bool) []byte {
	t.Helper()
	req := ptraceotlp.NewExportRequestFromTraces(oneTrace("otlp-svc"))
	b, err := req.MarshalProto()
	if asJSON {
		b, err = req.MarshalJSON()
	}
	require.NoError(t, err)
	return b
}

func otlpMetrics(t *testing.T) []byte {
	t.Helper()
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("requests")
	m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(3)
	b, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	return b
}

func otlpLogs(t *testing.T) []byte {
	t.Helper()
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("hello")
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()
	require.NoError(t, err)
	return b
}

// TestRoutesTakeTheirFormats: each route of Datakit's inputs, in each of its formats, reaches the
// pipeline with the spans' identity and service intact, and answers as its clients expect.
func TestRoutesTakeTheirFormats(t *testing.T) {
	for _, tt := range []struct {
		name, path, contentType string
		body                    func(*testing.T) []byte
		status                  int
		wantType                string // the answer's Content-Type, "" for none checked
		service                 string
		spans                   int
	}{
		{"jaeger thrift", "/apis/traces", "application/x-thrift", jaegerBatch, 202, "", "jaeger-svc", 2},
		{"jaeger without a media type", "/apis/traces", "", jaegerBatch, 202, "", "jaeger-svc", 2},
		{"zipkin v2 json", "/api/v2/spans", "application/json", func(*testing.T) []byte { return []byte(zipkinV2JSON) }, 202, "", "zipkin-svc", 1},
		{"zipkin v2 json with charset", "/api/v2/spans", "application/json; charset=utf-8", func(*testing.T) []byte { return []byte(zipkinV2JSON) }, 202, "", "zipkin-svc", 1},
		{"zipkin v2 protobuf", "/api/v2/spans", "application/x-protobuf", zipkinV2Proto, 202, "", "zipkin-proto", 1},
		{"zipkin v1 json", "/api/v1/spans", "application/json", func(*testing.T) []byte { return []byte(zipkinV1JSON) }, 202, "", "zipkin-v1", 1},
		{"otlp protobuf", "/otel/v1/traces", "application/x-protobuf", func(t *testing.T) []byte { return otlpTraces(t, false) }, 200, "application/x-protobuf", "otlp-svc", 1},
		{"otlp json", "/otel/v1/traces", "application/json", func(t *testing.T) []byte { return otlpTraces(t, true) }, 200, "application/json", "otlp-svc", 1},
		{"ddtrace v0.4 json", "/v0.4/traces", "application/json", func(*testing.T) []byte { return []byte(ddtraceJSON) }, 200, "application/json", "dd-svc", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.TracesSink)
			url := startReceiver(t, createDefaultConfig().(*Config), sinks{traces: sink}, receivertest.NewNopSettings(metadata.Type))
			status, header, body := post(t, url+tt.path, tt.contentType, tt.body(t))
			require.Equal(t, tt.status, status, body)
			if tt.wantType != "" {
				assert.Equal(t, tt.wantType, header.Get("Content-Type"))
			}
			require.Equal(t, tt.spans, sink.SpanCount())
			svc, _ := sink.AllTraces()[0].ResourceSpans().At(0).Resource().Attributes().Get("service.name")
			assert.Equal(t, tt.service, svc.Str())
		})
	}
}

// TestDDTraceDropsRejectedChunks: the ddtrace section's drop_rejected_chunks applies on
// Datakit's port: a chunk the tracer rejected never reaches the pipeline, the others do.
func TestDDTraceDropsRejectedChunks(t *testing.T) {
	const body = `[[{"trace_id":1,"span_id":2,"name":"web.request","service":"dd-svc","start":1700000000000000000,"duration":1000,"metrics":{"_sampling_priority_v1":-1}}],` +
		`[{"trace_id":3,"span_id":4,"name":"web.request","service":"dd-svc","start":1700000000000000000,"duration":1000,"metrics":{"_sampling_priority_v1":1}}]]`
	for _, on := range []bool{true, false} {
		cfg := createDefaultConfig().(*Config)
		cfg.DDTrace.DropRejectedChunks = on
		sink := new(consumertest.TracesSink)
		url := startReceiver(t, cfg, sinks{traces: sink}, receivertest.NewNopSettings(metadata.Type))
		status, _, answer := post(t, url+"/v0.4/traces", "application/json", []byte(body))
		require.Equal(t, 200, status, answer)
		want := 2
		if on {
			want = 1
		}
		assert.Equal(t, want, sink.SpanCount(), "drop_rejected_chunks %v", on)
	}
}

func TestJaegerKeepsIdentity(t *testing.T) {
	sink := new(consumertest.TracesSink)
	url := startReceiver(t, createDefaultConfig().(*Config), sinks{traces: sink}, receivertest.NewNopSettings(metadata.Type))
	status, _, body := post(t, url+"/apis/traces", "application/x-thrift", jaegerBatch(t))
	require.Equal(t, 202, status, body)
	spans := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	require.Equal(t, 2, spans.Len())
	child := spans.At(1)
	assert.Equal(t, pcommon.TraceID{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7}, child.TraceID())
	assert.Equal(t, pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 2}, child.SpanID())
	assert.Equal(t, pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1}, child.ParentSpanID())
	assert.Equal(t, "SELECT orders", child.Name())
	assert.Equal(t, ptrace.StatusCodeError, child.Status().Code())
}

func TestMetricsAndLogsRoutes(t *testing.T) {
	metrics, logs := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	url := startReceiver(t, createDefaultConfig().(*Config), sinks{metrics: metrics, logs: logs}, receivertest.NewNopSettings(metadata.Type))
	status, header, body := post(t, url+"/otel/v1/metrics", "application/x-protobuf", otlpMetrics(t))
	require.Equal(t, 200, status, body)
	assert.Equal(t, "application/x-protobuf", header.Get("Content-Type"))
	status, _, body = post(t, url+"/otel/v1/logs", "application/json", otlpLogs(t))
	require.Equal(t, 200, status, body)
	assert.Equal(t, 1, metrics.DataPointCount())
	assert.Equal(t, 1, logs.LogRecordCount())
	// Without a traces pipeline, the trace routes are not served.
	status, _, _ = post(t, url+"/otel/v1/traces", "application/x-protobuf", otlpTraces(t, false))
	assert.Equal(t, 404, status)
	status, _, _ = post(t, url+"/v0.4/traces", "application/json", []byte(ddtraceJSON))
	assert.Equal(t, 404, status)
}

// refusing refuses every offer with err.
type refusing struct{ err error }

func (r refusing) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
func (r refusing) ConsumeTraces(context.Context, ptrace.Traces) error {
	return r.err
}

// TestStatuses: the answers other than success, on every route.
func TestStatuses(t *testing.T) {
	retryable, permanent := errors.New("buffer full"), consumererror.NewPermanent(errors.New("schema mismatch"))
	for _, tt := range []struct {
		name, path, contentType string
		body                    []byte
		next                    consumer.Traces
		status                  int
		msg                     string
	}{
		{"undecodable jaeger", "/apis/traces", "application/x-thrift", []byte{0x0c, 0x00, 0x01, 0xff}, nil, 400, "cannot decode the thrift body"},
		{"undecodable zipkin", "/api/v2/spans", "application/json", []byte("{"), nil, 400, "cannot decode the json body"},
		{"undecodable otlp", "/otel/v1/traces", "application/x-protobuf", []byte{0xff, 0xff}, nil, 400, "cannot decode the protobuf body"},
		{"otlp of another media type", "/otel/v1/traces", "text/plain", []byte("x"), nil, 415, `unsupported media type "text/plain"`},
		{"zipkin v2 as thrift", "/api/v2/spans", "application/x-thrift", []byte("x"), nil, 415, "unsupported media type"},
		{"too large", "/api/v2/spans", "application/json", []byte("[" + strings.Repeat(" ", 2000) + "]"), nil, 413, "body larger than max_request_body_size (1024 bytes)"},
		{"refused for a moment", "/api/v2/spans", "application/json", []byte(zipkinV2JSON), refusing{retryable}, 429, "send again later"},
		{"refused for good", "/apis/traces", "", nil, refusing{permanent}, 400, "refused the data for good"},
		{"ddtrace refused", "/v0.4/traces", "application/json", []byte(ddtraceJSON), refusing{retryable}, 429, ""},
		{"ddtrace too large", "/v0.4/traces", "application/json", []byte("[" + strings.Repeat(" ", 600) + "]"), nil, 413, "payload-too-large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.MaxRequestBodySize, cfg.RefusalWait, cfg.DDTrace.RefusalWait, cfg.DDTrace.MaxRequestBodySize = 1024, 0, 0, 512
			next := tt.next
			if next == nil {
				next = new(consumertest.TracesSink)
			}
			url := startReceiver(t, cfg, sinks{traces: next}, receivertest.NewNopSettings(metadata.Type))
			body := tt.body
			if body == nil {
				body = jaegerBatch(t)
			}
			status, header, msg := post(t, url+tt.path, tt.contentType, body)
			assert.Equal(t, tt.status, status, msg)
			assert.Contains(t, msg, tt.msg)
			if status == 429 && tt.path != "/v0.4/traces" {
				assert.Equal(t, "1", header.Get("Retry-After"))
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	url := startReceiver(t, createDefaultConfig().(*Config), sinks{traces: new(consumertest.TracesSink)}, receivertest.NewNopSettings(metadata.Type))
	resp, err := http.Get(url + "/apis/traces")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 405, resp.StatusCode)
}

// TestRefusalWait: a refusal that passes within refusal_wait is answered as taken, with the data
// decoded afresh for the second offer.
func TestRefusalWait(t *testing.T) {
	sink := new(consumertest.TracesSink)
	first := true
	next, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		if first {
			first = false
			td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", "changed by a processor")
			return errors.New("buffer full")
		}
		return sink.ConsumeTraces(ctx, td)
	})
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	cfg.RefusalWait = 5 * time.Second
	url := startReceiver(t, cfg, sinks{traces: next}, receivertest.NewNopSettings(metadata.Type))
	status, _, msg := post(t, url+"/api/v2/spans", "application/json", []byte(zipkinV2JSON))
	require.Equal(t, 202, status, msg)
	svc, _ := sink.AllTraces()[0].ResourceSpans().At(0).Resource().Attributes().Get("service.name")
	assert.Equal(t, "zipkin-svc", svc.Str())
}

func TestRequestsAreCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	url := startReceiver(t, createDefaultConfig().(*Config), sinks{traces: new(consumertest.TracesSink)}, set)
	post(t, url+"/api/v2/spans", "application/json", []byte(zipkinV2JSON))
	post(t, url+"/api/v2/spans", "application/json", []byte("{"))
	post(t, url+"/apis/traces", "", jaegerBatch(t))
	point := func(path string, status, n int) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("path", path), attribute.Int("http.response.status_code", status)), Value: int64(n)}
	}
	metadatatest.AssertEqualReceiverDatakitRequests(t, tel, []metricdata.DataPoint[int64]{
		point("/api/v2/spans", 202, 1), point("/api/v2/spans", 400, 1), point("/apis/traces", 202, 1),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	// The standard receiver counts: 3 spans accepted, a request that failed to decode.
	m, err := tel.GetMetric("otelcol_receiver_accepted_spans")
	require.NoError(t, err)
	var accepted int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		accepted += dp.Value
	}
	assert.Equal(t, int64(3), accepted)
}

// TestRouteWithoutPipeline: a route of a signal no pipeline takes answers 404 with the reason, and
// the request is counted under its route.
func TestRouteWithoutPipeline(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	url := startReceiver(t, createDefaultConfig().(*Config), sinks{metrics: new(consumertest.MetricsSink)}, set)
	for _, tc := range []struct{ path, signal string }{
		{"/api/v2/spans", "traces"}, {"/otel/v1/traces", "traces"}, {"/otel/v1/logs", "logs"}, {"/v0.4/traces", "traces"},
	} {
		status, _, body := post(t, url+tc.path, "application/json", []byte("{}"))
		assert.Equal(t, http.StatusNotFound, status, tc.path)
		assert.Contains(t, body, "no "+tc.signal+" pipeline", tc.path)
	}
	status, _, _ := post(t, url+"/otel/v1/metrics", "application/json", []byte("{}"))
	assert.Equal(t, http.StatusOK, status)
	point := func(path string, status int) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("path", path), attribute.Int("http.response.status_code", status)), Value: 1}
	}
	metadatatest.AssertEqualReceiverDatakitRequests(t, tel, []metricdata.DataPoint[int64]{
		point("/api/v2/spans", 404), point("/otel/v1/traces", 404), point("/otel/v1/logs", 404), point("/", 404),
		point("/otel/v1/metrics", 200),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}
