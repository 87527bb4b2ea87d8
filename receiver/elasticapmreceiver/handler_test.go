package elasticapmreceiver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadatatest"
)

// testReceiver is a started receiver with sinks for every signal and its telemetry.
type testReceiver struct {
	r       *intakeReceiver
	url     string
	traces  *consumertest.TracesSink
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
	tel     *componenttest.Telemetry
}

// startReceiver starts a receiver on a free port; traces go to next when it is set, else to a sink.
func startReceiver(t *testing.T, mutate func(*Config), next consumer.Traces) *testReceiver {
	t.Helper()
	return startReceiverOn(t, componenttest.NewNopHost(), zap.NewNop(), mutate, next)
}

// startReceiverOn is startReceiver on host, logging to logger.
func startReceiverOn(t *testing.T, host component.Host, logger *zap.Logger, mutate func(*Config), next consumer.Traces) *testReceiver {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.RefusalWait = 0
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	set.Logger = logger
	r, err := newReceiver(cfg, set)
	require.NoError(t, err)
	tr := &testReceiver{r: r, traces: new(consumertest.TracesSink), logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink), tel: tel}
	r.next.Traces, r.next.Logs, r.next.Metrics = tr.traces, tr.logs, tr.metrics
	if next != nil {
		r.next.Traces = next
	}
	require.NoError(t, r.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	tr.url = "http://" + r.addr
	return tr
}

// reply is a response, read whole.
type reply struct {
	status int
	closed bool // the server asked to close the connection (APM Server does so on errors)
	header http.Header
	body   string
	result result
}

func (tr *testReceiver) do(t *testing.T, method, path string, body []byte, header map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(method, tr.url+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Accept", "application/json")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	rep := reply{status: resp.StatusCode, closed: resp.Close, header: resp.Header, body: string(b)}
	if len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(b, &rep.result)
	}
	return rep
}

func (tr *testReceiver) post(t *testing.T, body []byte, header map[string]string) reply {
	t.Helper()
	return tr.do(t, http.MethodPost, intakePath, body, header)
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("internal", "convert", "testdata", "edot", name))
	require.NoError(t, err)
	return b
}

func readInvalid(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "invalid", name))
	require.NoError(t, err)
	return b
}

const metadataLine = `{"metadata":{"service":{"name":"svc","agent":{"name":"nodejs","version":"4.18.0"}}}}` + "\n"

func transactionLine(id string) string {
	return fmt.Sprintf(`{"transaction":{"id":"%s","trace_id":"0123456789abcdef0123456789abcdef","name":"GET /","type":"request","duration":1.5,"timestamp":1700000000000000,"span_count":{"started":0}}}`+"\n", id)
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func zlibbed(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestAccepted: a valid stream is 202 with an empty body, in every encoding an agent may use,
// and all its events reach the pipeline.
func TestAccepted(t *testing.T) {
	tr := startReceiver(t, nil, nil)
	body := readTestdata(t, "transactions_spans.ndjson")
	for _, tc := range []struct {
		name   string
		body   []byte
		header map[string]string
	}{
		{"plain", body, nil},
		{"gzip", gzipped(t, body), map[string]string{"Content-Encoding": "gzip"}},
		{"deflate", zlibbed(t, body), map[string]string{"Content-Encoding": "deflate"}},
		{"gzip sniffed", gzipped(t, body), nil},
		{"zlib sniffed", zlibbed(t, body), nil},
		{"no content type", body, map[string]string{"Content-Type": ""}},
		{"content type with charset", body, map[string]string{"Content-Type": "application/x-ndjson; charset=utf-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr.traces.Reset()
			rep := tr.post(t, tc.body, tc.header)
			assert.Equal(t, http.StatusAccepted, rep.status, rep.body)
			assert.Empty(t, rep.body)
			assert.Equal(t, 9, tr.traces.SpanCount())
			require.Len(t, tr.traces.AllTraces(), 1, "one request is one ConsumeTraces")
		})
	}
	rep := tr.do(t, http.MethodPost, intakePath+"?verbose", body, nil)
	assert.Equal(t, http.StatusAccepted, rep.status)
	assert.Equal(t, 9, rep.result.Accepted)
}

// TestAllSignals: errors and logs become log records, metricsets metrics, each signal one call.
func TestAllSignals(t *testing.T) {
	tr := startReceiver(t, nil, nil)
	for _, tc := range []struct {
		file     string
		accepted int
		check    func() int
	}{
		{"errors.ndjson", 5, tr.logs.LogRecordCount},
		{"logs.ndjson", 0, tr.logs.LogRecordCount},
		{"metricsets.ndjson", 0, func() int {
			n := 0
			for _, md := range tr.metrics.AllMetrics() {
				n += md.DataPointCount()
			}
			return n
		}},
	} {
		tr.logs.Reset()
		tr.metrics.Reset()
		rep := tr.do(t, http.MethodPost, intakePath+"?verbose", readTestdata(t, tc.file), nil)
		require.Equal(t, http.StatusAccepted, rep.status, rep.body)
		if tc.accepted > 0 {
			assert.Equal(t, tc.accepted, rep.result.Accepted, tc.file)
		}
		assert.Positive(t, tc.check(), tc.file)
	}
}

// TestInvalidRequests: what APM Server answers 400 (and 413) to, with its error objects; the
// valid events of a request with invalid ones are still taken and counted.
func TestInvalidRequests(t *testing.T) {
	tr := startReceiver(t, func(c *Config) {
		c.MaxEventSize = 4 << 10
		c.MaxRequestBodySize = 64 << 10
	}, nil)
	// 10 MiB of empty lines (which the decoder skips), 10 KiB gzipped.
	bomb := append([]byte(metadataLine), bytes.Repeat([]byte("\n"), 10<<20)...)
	longLine := metadataLine + `{"transaction":{"name":"` + strings.Repeat("x", 5<<10) + `"}}` + "\n" + transactionLine("0000000000000001")
	for _, tc := range []struct {
		name     string
		method   string
		body     []byte
		header   map[string]string
		status   int
		accepted int
		message  string // the first error's message contains it
		document bool   // the first error carries the offending line
	}{
		{"invalid event", "", readInvalid(t, "invalid-event.ndjson"), nil, 400, 1, "decode error: data read error: v2.transactionRoot.Transaction: v2.transaction.ID", true},
		{"unknown event type", "", readInvalid(t, "invalid-event-type.ndjson"), nil, 400, 0, `did not recognize object type: "shipment"`, true},
		{"invalid JSON event", "", readInvalid(t, "invalid-json-event.ndjson"), nil, 400, 1, `did not recognize object type: "bare-key-without-value"`, true},
		{"invalid JSON metadata", "", readInvalid(t, "invalid-json-metadata.ndjson"), nil, 400, 0, "decode error: data read error: v2.metadataRoot.Metadata", true},
		{"metadata line missing", "", readInvalid(t, "invalid-metadata-2.ndjson"), nil, 400, 0, `"metadata" or "m" required`, true},
		{"metadata invalid", "", readInvalid(t, "invalid-metadata.ndjson"), nil, 400, 0, "validation error: 'metadata' required", true},
		{"agent name missing", "", readInvalid(t, "missing-agent-metadata.ndjson"), nil, 400, 0, "validation error: metadata: service: agent: 'name'", true},
		{"event above max_event_size", "", []byte(longLine), nil, 400, 1, "event exceeded the permitted size", true},
		{"truncated NDJSON", "", []byte(metadataLine + transactionLine("0000000000000001") + `{"transaction":{"id":"00000`), nil, 400, 1, "decode error", true},
		{"invalid UTF-8", "", []byte(metadataLine + "{\"transaction\":{\"id\":\"0000000000000001\",\"trace_id\":\"0123456789abcdef0123456789abcdef\",\"name\":\"\xff\xfe\",\"type\":\"request\",\"duration\":1,\"span_count\":{\"started\":0}}}\n"), nil, 400, 0, "invalid UTF-8 at byte", false},
		{"body above max_request_body_size", "", []byte(metadataLine + strings.Repeat(transactionLine("0000000000000001"), 400)), nil, 413, -1, "request body too large", false},
		{"gzip bomb", "", gzipped(t, bomb), map[string]string{"Content-Encoding": "gzip"}, 413, 0, "request body too large", false},
		{"gzip bomb sniffed", "", gzipped(t, bomb), nil, 413, 0, "request body too large", false},
		{"gzip cut short", "", gzipped(t, []byte(metadataLine+transactionLine("0000000000000001")))[:40], map[string]string{"Content-Encoding": "gzip"}, 400, 0, "", false},
		{"not gzip", "", []byte(metadataLine), map[string]string{"Content-Encoding": "gzip"}, 400, 0, "data decoding error: gzip: invalid header", false},
		{"GET", http.MethodGet, nil, nil, 400, 0, "only POST requests are supported", false},
		{"wrong content type", "", []byte(metadataLine), map[string]string{"Content-Type": "application/json"}, 400, 0, "invalid content type: 'application/json'", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			rep := tr.do(t, method, intakePath, tc.body, tc.header)
			require.Equal(t, tc.status, rep.status, rep.body)
			assert.Equal(t, "application/json", rep.header.Get("Content-Type"))
			assert.True(t, rep.closed, "Connection: close")
			if tc.accepted >= 0 {
				assert.Equal(t, tc.accepted, rep.result.Accepted, rep.body)
			}
			require.NotEmpty(t, rep.result.Errors, rep.body)
			assert.Contains(t, rep.result.Errors[0].Message, tc.message)
			if tc.document {
				assert.NotEmpty(t, rep.result.Errors[0].Document)
			}
		})
	}
}

// TestInvalidEventsAreCounted: invalid and too large events by type, the valid one accepted.
func TestInvalidEventsAreCounted(t *testing.T) {
	tr := startReceiver(t, func(c *Config) { c.MaxEventSize = 1 << 10 }, nil)
	body := metadataLine + `{"span":{"id":1}}` + "\n" + `{"transaction":{"name":"` + strings.Repeat("x", 8<<10) + `"}}` + "\n" + transactionLine("0000000000000001")
	rep := tr.post(t, []byte(body), nil)
	require.Equal(t, http.StatusBadRequest, rep.status, rep.body)
	assert.Equal(t, 1, rep.result.Accepted)
	assert.Len(t, rep.result.Errors, 2)
	metadatatest.AssertEqualReceiverElasticapmEvents(t, tr.tel, []metricdata.DataPoint[int64]{
		eventsPoint("span", outcomeInvalid, 1), eventsPoint("transaction", outcomeTooLarge, 1), eventsPoint("transaction", outcomeAccepted, 1),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualReceiverElasticapmRequests(t, tr.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.Int("http.response.status_code", 400))},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func eventsPoint(eventType, outcome string, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(
		attribute.String("event.type", eventType), attribute.String("outcome", outcome))}
}

// refusingTraces refuses the first n calls with err, then takes everything.
type refusingTraces struct {
	consumertest.TracesSink
	n     int32
	calls atomic.Int32
	err   error
}

func (c *refusingTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if c.calls.Add(1) <= c.n {
		return c.err
	}
	return c.TracesSink.ConsumeTraces(ctx, td)
}

func (*refusingTraces) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

// TestPipelineRefusals: a retryable refusal is 503 (never 400: agents drop what they get a 400
// for), after refusal_wait re-offers; a permanent error is 500. Other signals are still taken.
func TestPipelineRefusals(t *testing.T) {
	refused := errors.New("data refused due to high memory usage")
	body := []byte(metadataLine + transactionLine("0000000000000001") + transactionLine("0000000000000002") + `{"error":{"id":"0123456789abcdef0123456789abcdef","exception":{"message":"boom"}}}` + "\n")
	for _, tc := range []struct {
		name     string
		refusals int32
		err      error
		wait     time.Duration
		status   int
		accepted int
	}{
		{"refused", 1 << 30, refused, 0, 503, 1},
		{"refused for longer than refusal_wait", 1 << 30, refused, 50 * time.Millisecond, 503, 1},
		{"refused, then taken within refusal_wait", 3, refused, time.Second, 202, 3},
		{"permanent", 1 << 30, consumererror.NewPermanent(errors.New("bad data")), time.Second, 500, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &refusingTraces{n: tc.refusals, err: tc.err}
			tr := startReceiver(t, func(c *Config) { c.RefusalWait = tc.wait }, next)
			rep := tr.do(t, http.MethodPost, intakePath+"?verbose", body, nil)
			require.Equal(t, tc.status, rep.status, rep.body)
			assert.Equal(t, tc.accepted, rep.result.Accepted)
			assert.Equal(t, 1, tr.logs.LogRecordCount(), "the error event is taken whatever becomes of the transactions")
			if tc.status != 202 {
				require.NotEmpty(t, rep.result.Errors)
				assert.Contains(t, rep.result.Errors[0].Message, "cannot handle stream: cannot process batch: ")
				metadatatest.AssertEqualReceiverElasticapmEvents(t, tr.tel, []metricdata.DataPoint[int64]{
					eventsPoint("transaction", outcomeRefused, 2), eventsPoint("error", outcomeAccepted, 1),
				}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
			} else {
				assert.Equal(t, 2, next.SpanCount())
			}
		})
	}
}

// TestNoPipelineForASignal: events of a signal no pipeline takes are acknowledged and counted.
func TestNoPipelineForASignal(t *testing.T) {
	tr := startReceiver(t, nil, nil)
	tr.r.next.Logs = nil
	rep := tr.post(t, readTestdata(t, "errors.ndjson"), nil)
	require.Equal(t, http.StatusAccepted, rep.status, rep.body)
	metadatatest.AssertEqualReceiverElasticapmEvents(t, tr.tel, []metricdata.DataPoint[int64]{
		eventsPoint("error", outcomeNoPipeline, 5),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// blockingTraces holds every call until release is closed.
type blockingTraces struct {
	consumertest.TracesSink
	entered chan struct{}
	release chan struct{}
}

func (c *blockingTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	c.entered <- struct{}{}
	<-c.release
	return c.TracesSink.ConsumeTraces(ctx, td)
}

// TestBusy: with every slot held past queue_timeout, a request is 503 (retry later), not 400.
func TestBusy(t *testing.T) {
	next := &blockingTraces{entered: make(chan struct{}, 1), release: make(chan struct{})}
	tr := startReceiver(t, func(c *Config) { c.MaxConcurrentRequests = 1; c.QueueTimeout = 20 * time.Millisecond }, next)
	body := []byte(metadataLine + transactionLine("0000000000000001"))
	first := make(chan int, 1)
	go func() {
		resp, err := http.Post(tr.url+intakePath, "application/x-ndjson", bytes.NewReader(body))
		if err != nil {
			first <- 0
			return
		}
		_ = resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-next.entered
	rep := tr.post(t, body, nil)
	assert.Equal(t, http.StatusServiceUnavailable, rep.status, rep.body)
	require.NotEmpty(t, rep.result.Errors)
	assert.Contains(t, rep.result.Errors[0].Message, "unable to service request")
	close(next.release)
	assert.Equal(t, http.StatusAccepted, <-first)
}

// TestServerInformation: GET / as APM Server answers it; agents read version.
func TestServerInformation(t *testing.T) {
	tr := startReceiver(t, func(c *Config) { c.ServerVersion = "9.3.1" }, nil)
	rep := tr.do(t, http.MethodGet, "/", nil, nil)
	require.Equal(t, http.StatusOK, rep.status)
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(rep.body), &info))
	assert.Equal(t, "9.3.1", info["version"])
	assert.Equal(t, true, info["publish_ready"])
	assert.Contains(t, info, "build_date")
	assert.Contains(t, info, "build_sha")

	rep = tr.do(t, http.MethodGet, "/", nil, map[string]string{"Accept": ""})
	assert.Equal(t, "text/plain; charset=utf-8", rep.header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(rep.body, `{"build_date":"0001-01-01T00:00:00Z","build_sha":`), rep.body)

	assert.Equal(t, http.StatusOK, tr.do(t, http.MethodHead, "/", nil, nil).status)
	assert.Equal(t, http.StatusMethodNotAllowed, tr.do(t, http.MethodPost, "/", nil, nil).status)
	assert.Equal(t, http.StatusNotFound, tr.do(t, http.MethodGet, "/nowhere", nil, nil).status)
}

// TestAgentConfiguration: without a configuration source, 403 with a max-age, which agents read as
// "central configuration disabled" (a debug line) and poll again after.
func TestAgentConfiguration(t *testing.T) {
	tr := startReceiver(t, nil, nil)
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		rep := tr.do(t, method, agentConfigPath+"?service.name=svc", []byte(`{"service":{"name":"svc"}}`), nil)
		assert.Equal(t, http.StatusForbidden, rep.status)
		assert.Equal(t, "max-age=300, must-revalidate", rep.header.Get("Cache-Control"))
		assert.Contains(t, rep.body, "Agent remote configuration is disabled")
	}
	assert.Equal(t, http.StatusMethodNotAllowed, tr.do(t, http.MethodDelete, agentConfigPath, nil, nil).status)
}

// TestBuffersCarryNothingOver: the pooled per-request buffers start clean after a request cut off
// mid-rune, mid-gzip or mid-line.
func TestBuffersCarryNothingOver(t *testing.T) {
	tr := startReceiver(t, func(c *Config) { c.MaxConcurrentRequests = 1 }, nil)
	good := []byte(metadataLine + transactionLine("0000000000000001"))
	for _, bad := range [][]byte{
		[]byte(metadataLine + `{"transaction":{"name":"` + "\xe2\x82"),
		gzipped(t, good)[:30],
		[]byte(metadataLine + `{"transaction":{"id":"00`),
	} {
		require.Equal(t, http.StatusBadRequest, tr.post(t, bad, nil).status)
		tr.traces.Reset()
		rep := tr.post(t, good, nil)
		require.Equal(t, http.StatusAccepted, rep.status, rep.body)
		assert.Equal(t, 1, tr.traces.SpanCount())
	}
}

// tokenAuth is an authenticator extension that takes one bearer token.
type tokenAuth struct {
	component.StartFunc
	component.ShutdownFunc
}

func (tokenAuth) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	if v := headers["Authorization"]; len(v) == 1 && v[0] == "Bearer s3cret" {
		return ctx, nil
	}
	return ctx, errors.New("missing or wrong bearer token")
}

// hostWith is a host with the given extensions.
type hostWith struct {
	component.Host
	extensions map[component.ID]component.Component
}

func (h hostWith) GetExtensions() map[component.ID]component.Component { return h.extensions }

// TestUnauthorized: a request without the agent's secret token gets APM Server's 401, and is
// counted and logged, so that an agent configured with the wrong token shows in the telemetry.
func TestUnauthorized(t *testing.T) {
	authID := component.MustNewID("tokenauth")
	host := hostWith{Host: componenttest.NewNopHost(), extensions: map[component.ID]component.Component{authID: tokenAuth{}}}
	core, logs := observer.New(zap.WarnLevel)
	tr := startReceiverOn(t, host, zap.New(core), func(c *Config) {
		c.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: authID}})
	}, nil)
	body := []byte(metadataLine + transactionLine("0000000000000001"))
	for range 2 {
		rep := tr.post(t, body, nil)
		require.Equal(t, http.StatusUnauthorized, rep.status, rep.body)
		assert.Contains(t, rep.body, "authentication failed")
	}
	rep := tr.post(t, body, map[string]string{"Authorization": "Bearer s3cret"})
	require.Equal(t, http.StatusAccepted, rep.status, rep.body)
	assert.Equal(t, 1, tr.traces.SpanCount())
	metadatatest.AssertEqualReceiverElasticapmRequests(t, tr.tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.Int("http.response.status_code", 401))},
		{Value: 1, Attributes: attribute.NewSet(attribute.Int("http.response.status_code", 202))},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	require.Equal(t, 1, logs.FilterMessageSnippet("secret token or API key").Len(), "logged once: %v", logs.All())
}

// TestDecodedEventsByDecoder: spanjson's events and apm-data's are counted apart: the common
// transaction and span by spanjson, the span with a stack trace and the error by apm-data.
func TestDecodedEventsByDecoder(t *testing.T) {
	tr := startReceiver(t, nil, nil)
	const ids = `"trace_id":"0123456789abcdef0123456789abcdef","parent_id":"0000000000000001","name":"q","type":"db","duration":1,"timestamp":1700000000000000`
	body := metadataLine + transactionLine("0000000000000001") +
		`{"span":{"id":"0000000000000002",` + ids + `}}` + "\n" +
		`{"span":{"id":"0000000000000003",` + ids + `,"stacktrace":[{"filename":"a.js","lineno":1}]}}` + "\n" +
		`{"error":{"id":"0123456789abcdef0123456789abcdef","timestamp":1700000000000000,"log":{"message":"boom"}}}` + "\n"
	rep := tr.post(t, []byte(body), nil)
	require.Equal(t, http.StatusAccepted, rep.status, rep.body)
	decoded := func(decoder string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String("decoder", decoder))}
	}
	metadatatest.AssertEqualReceiverElasticapmDecodedEvents(t, tr.tel, []metricdata.DataPoint[int64]{
		decoded("spanjson", 2), decoded("apm-data", 2),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}
