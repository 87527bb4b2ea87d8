package ddtracereceiver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
)

// v04Body is one trace of n spans in v0.4 msgpack; each span carries meta test_id=<prefix><i>.
func v04Body(prefix string, traceID uint64, n int) []byte {
	b := msgp.AppendArrayHeader(nil, 1)
	b = msgp.AppendArrayHeader(b, uint32(n))
	for i := range n {
		b = msgp.AppendMapHeader(b, 8)
		b = msgp.AppendString(b, "service")
		b = msgp.AppendString(b, "svc")
		b = msgp.AppendString(b, "name")
		b = msgp.AppendString(b, "op")
		b = msgp.AppendString(b, "trace_id")
		b = msgp.AppendUint64(b, traceID)
		b = msgp.AppendString(b, "span_id")
		b = msgp.AppendUint64(b, uint64(i+1))
		b = msgp.AppendString(b, "parent_id")
		b = msgp.AppendUint64(b, uint64(i))
		b = msgp.AppendString(b, "start")
		b = msgp.AppendInt64(b, time.Now().UnixNano())
		b = msgp.AppendString(b, "duration")
		b = msgp.AppendInt64(b, 1000)
		b = msgp.AppendString(b, "meta")
		b = msgp.AppendMapHeader(b, 1)
		b = msgp.AppendString(b, receivertest.UniqueIDAttrName)
		b = msgp.AppendString(b, fmt.Sprintf("%s%d", prefix, i))
	}
	return b
}

func serve(t *testing.T, r *ddReceiver, method, path string, body []byte, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/msgpack")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.handler().ServeHTTP(rec, req)
	return rec
}

func TestRoutes(t *testing.T) {
	sink := new(consumertest.TracesSink)
	r := newTestReceiver(t, createDefaultConfig().(*Config), sink)
	rates := `{"rate_by_service":{"service:,env:":1}}` + "\n"
	for _, tt := range []struct {
		name, method, path string
		body               []byte
		headers            map[string]string
		wantStatus         int
		wantBody           string
		wantState          bool
	}{
		{"v0.4 POST", "POST", "/v0.4/traces", v04Body("a", 1, 2), nil, 200, rates, true},
		{"v0.4 PUT", "PUT", "/v0.4/traces", v04Body("b", 1, 2), nil, 200, rates, true},
		{"v0.3 replies OK", "PUT", "/v0.3/traces", v04Body("c", 1, 1), nil, 200, "OK\n", true},
		{"java probe [[],[]]", "PUT", "/v0.4/traces", []byte{0x92, 0x90, 0x90}, nil, 200, rates, true},
		{"GET on traces", "GET", "/v0.4/traces", nil, nil, 405, "method not allowed\n", true},
		{"empty body", "PUT", "/v0.4/traces", nil, nil, 400, "unexpected-eof\n", true},
		{"truncated msgpack", "PUT", "/v0.4/traces", v04Body("d", 1, 1)[:30], nil, 400, "", true},
		{"msgpack on v0.2", "PUT", "/v0.2/traces", v04Body("e", 1, 1), nil, 415, "unsupported media type: v0.2 accepts JSON only\n", true},
		{"cross-site", "PUT", "/v0.4/traces", v04Body("f", 1, 1), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross-site request refused\n", true},
		{"v0.5 bad index", "PUT", "/v0.5/traces", []byte{0x92, 0x91, 0xa0, 0x91, 0x91, 0x9c, 0x09}, nil, 400, "", true},
		{"services v0.3", "PUT", "/v0.3/services", []byte("{}"), nil, 200, "OK\n", true},
		{"services v0.4", "PUT", "/v0.4/services", []byte("{}"), nil, 200, "OK\n", true},
		{"telemetry discarded", "POST", "/telemetry/proxy/api/v2/apmtelemetry", []byte(`{"x":1}`), nil, 202, "", true},
		{"dogstatsd over http discarded", "POST", "/dogstatsd/v2/proxy", []byte("m:1|c"), nil, 200, "", true},
		{"unknown version", "PUT", "/v9/traces", v04Body("g", 1, 1), nil, 404, "404 page not found\n", false},
		{"stats not offered", "PUT", "/v0.6/stats", []byte{0x80}, nil, 404, "404 page not found\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, r, tt.method, tt.path, tt.body, tt.headers)
			assert.Equal(t, tt.wantStatus, rec.Code, rec.Body.String())
			if tt.wantBody != "" {
				assert.Equal(t, tt.wantBody, rec.Body.String())
			}
			assert.Equal(t, tt.wantState, rec.Header().Get("Datadog-Agent-State") != "")
			if tt.wantState {
				assert.Equal(t, "7.65.0", rec.Header().Get("Datadog-Agent-Version"))
			}
		})
	}
	assert.Equal(t, 5, sink.SpanCount(), "only the valid v0.3/v0.4 requests reach the pipeline")
}

// TestInfo is test vector 15: /info advertises what tracegate does, and its hash is the
// Datadog-Agent-State of every trace reply.
func TestInfo(t *testing.T) {
	r := newTestReceiver(t, createDefaultConfig().(*Config), new(consumertest.TracesSink))
	rec := serve(t, r, "GET", "/info", nil, nil)
	require.Equal(t, 200, rec.Code)
	// libdatadog's info fetcher (the PHP sidecar, .NET and the native writers of Python and
	// Ruby) fails with "Agent state header not found" without it.
	sum := sha256.Sum256(rec.Body.Bytes())
	assert.Equal(t, hex.EncodeToString(sum[:]), rec.Header().Get("Datadog-Agent-State"), "the hash of the body it is sent with")
	var info map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &info))
	assert.Equal(t, false, info["client_drop_p0s"])
	assert.Equal(t, true, info["span_events"])
	assert.Equal(t, "7.65.0", info["version"])
	assert.ElementsMatch(t, []any{"/v0.3/traces", "/v0.4/traces", "/v0.5/traces", "/v0.7/traces", "/v0.3/services", "/v0.4/services", "/telemetry/proxy/"}, info["endpoints"])
	cfg := info["config"].(map[string]any)
	assert.InDelta(t, 8126, cfg["receiver_port"], 0)
	assert.InDelta(t, 25<<20, cfg["max_request_bytes"], 0)

	again := serve(t, r, "GET", "/info", nil, nil)
	assert.Equal(t, rec.Body.String(), again.Body.String(), "the body is stable")
	traces := serve(t, r, "PUT", "/v0.4/traces", v04Body("x", 1, 1), nil)
	assert.Equal(t, hex.EncodeToString(sum[:]), traces.Header().Get("Datadog-Agent-State"))
}

// refusingConsumer refuses with err until it is told to accept.
type refusingConsumer struct {
	consumertest.TracesSink
	err error
}

func (c *refusingConsumer) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if c.err != nil {
		return c.err
	}
	return c.TracesSink.ConsumeTraces(ctx, td)
}

func TestPipelineRefusals(t *testing.T) {
	retryable := errors.New("data refused due to high memory usage")
	for _, tt := range []struct {
		name       string
		err        error
		refusal    int
		header     string
		wantStatus int
		wantBody   string
	}{
		{"agent default: 200 with the rate body", retryable, 200, "", 200, `{"rate_by_service":{"service:,env:":1}}` + "\n"},
		{"tracer asks for real statuses", retryable, 200, "true", 429, `{"rate_by_service":{"service:,env:":1}}` + "\n"},
		{"header set to false", retryable, 200, "false", 200, `{"rate_by_service":{"service:,env:":1}}` + "\n"},
		{"configured 503", retryable, 503, "", 503, `{"rate_by_service":{"service:,env:":1}}` + "\n"},
		{"permanent error", consumererror.NewPermanent(errors.New("mapping")), 200, "true", 400, "Permanent error: mapping\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.RefusalStatus = tt.refusal
			cfg.RefusalWait = 20 * time.Millisecond // the refusal outlasts the wait
			next := &refusingConsumer{err: tt.err}
			tel := componenttest.NewTelemetry()
			defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
			set := receivertest.NewNopSettings(metadata.Type)
			set.TelemetrySettings = tel.NewTelemetrySettings()
			r, err := newReceiver(cfg, set, next)
			require.NoError(t, err)
			rec := serve(t, r, "PUT", "/v0.4/traces", v04Body("r", 1, 3), map[string]string{"Datadog-Send-Real-Http-Status": tt.header})
			assert.Equal(t, tt.wantStatus, rec.Code)
			assert.Equal(t, tt.wantBody, rec.Body.String())
			assert.Zero(t, next.SpanCount())
			// Every refused span is counted, in the standard receiver metric, and the request by
			// its cause.
			refused, err := tel.GetMetric("otelcol_receiver_refused_spans")
			require.NoError(t, err)
			assert.Equal(t, int64(3), sumInt(t, refused))
			rejected, err := tel.GetMetric(rejectedMetric)
			require.NoError(t, err)
			assert.Equal(t, int64(1), sumInt(t, rejected))
		})
	}
}

// refusingFor refuses the first `refusals` payloads with a retryable error, then takes them.
type refusingFor struct {
	consumertest.TracesSink
	refusals int
	err      error
	calls    atomic.Int64
}

func (c *refusingFor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if int(c.calls.Add(1)) <= c.refusals {
		return c.err
	}
	return c.TracesSink.ConsumeTraces(ctx, td)
}

// TestRefusalWait: a payload the pipeline refuses for a moment (a full buffer) is offered again
// for up to refusal_wait, so the tracer is held, as the Datadog Agent holds it, instead of losing
// its spans; refusals that outlast the wait, and permanent errors, are answered as before.
func TestRefusalWait(t *testing.T) {
	retryable := errors.New("sending queue is full")
	for _, tt := range []struct {
		name               string
		wait               time.Duration
		refusals           int
		err                error
		wantStatus         int
		wantSpans, wantTry int
		minTime            time.Duration
	}{
		{"refused twice, then taken", time.Second, 2, retryable, 200, 3, 3, 15 * time.Millisecond},
		{"refused longer than the wait", 60 * time.Millisecond, 1000, retryable, 429, 0, 0, 60 * time.Millisecond},
		{"no wait configured: refused at once", 0, 1, retryable, 429, 0, 1, 0},
		{"permanent errors are not offered again", time.Second, 1, consumererror.NewPermanent(errors.New("mapping")), 400, 0, 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.RefusalWait = tt.wait
			next := &refusingFor{refusals: tt.refusals, err: tt.err}
			r := newTestReceiver(t, cfg, nil)
			r.next = next
			start := time.Now()
			rec := serve(t, r, "PUT", "/v0.4/traces", v04Body("w", 1, 3), map[string]string{"Datadog-Send-Real-Http-Status": "true"})
			took := time.Since(start)
			assert.Equal(t, tt.wantStatus, rec.Code, rec.Body.String())
			assert.Equal(t, tt.wantSpans, next.SpanCount())
			if tt.wantTry > 0 {
				assert.Equal(t, int64(tt.wantTry), next.calls.Load(), "offers to the pipeline")
			}
			// A lower bound only: an upper one would be a timed test. A wait that never ended
			// would hold serve until the test's timeout.
			assert.GreaterOrEqual(t, took, tt.minTime)
		})
	}
}

// mutatingThenRefusing changes every span it is given in place, as a processor in front of a
// full buffer may, and refuses the first `refusals` offers.
type mutatingThenRefusing struct {
	consumertest.TracesSink
	refusals int
	calls    int
}

func (c *mutatingThenRefusing) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	c.calls++
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		for _, ss := range rss.At(i).ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				span.SetName(span.Name() + "+")
			}
		}
	}
	if c.calls <= c.refusals {
		return errors.New("sending queue is full")
	}
	return c.TracesSink.ConsumeTraces(ctx, td)
}

// TestReofferIsAFreshTranslation: a payload offered again after a refusal is translated again, so
// what a processor changed in place before the refusal is not changed twice.
func TestReofferIsAFreshTranslation(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	next := &mutatingThenRefusing{refusals: 2}
	r := newTestReceiver(t, cfg, nil)
	r.next = next
	rec := serve(t, r, "PUT", "/v0.4/traces", v04Body("m", 1, 2), nil)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	require.Equal(t, 3, next.calls)
	require.Equal(t, 2, next.SpanCount())
	span := next.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	assert.Equal(t, "op+", span.Name(), "changed once, by the offer that was taken")
}

// TestQueueTimeoutZeroTakesAFreeSlot: queue_timeout 0 means "do not wait", not "refuse": a request
// that finds a free slot is served.
func TestQueueTimeoutZeroTakesAFreeSlot(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.QueueTimeout, cfg.MaxConcurrentRequests = 0, 1
	sink := new(consumertest.TracesSink)
	r := newTestReceiver(t, cfg, nil)
	r.next = sink
	for i := range 50 {
		rec := serve(t, r, "PUT", "/v0.4/traces", v04Body("q", uint64(i+1), 1), map[string]string{"Datadog-Send-Real-Http-Status": "true"})
		require.Equal(t, 200, rec.Code, "request %d: %s", i, rec.Body.String())
	}
	assert.Equal(t, 50, sink.SpanCount())
}

// TestOverload is test vector 13: with every decoding slot busy past queue_timeout the request
// is refused (200 with the rate body, or 429 on request) and no span is emitted for it.
func TestOverload(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxConcurrentRequests = 1
	cfg.QueueTimeout = 50 * time.Millisecond
	release := make(chan struct{})
	entered := make(chan struct{})
	var once sync.Once
	blocking := &blockingConsumer{release: release, entered: func() { once.Do(func() { close(entered) }) }}
	r := newTestReceiver(t, cfg, nil)
	r.next = blocking
	done := make(chan int)
	go func() { done <- serve(t, r, "PUT", "/v0.4/traces", v04Body("first", 1, 1), nil).Code }()
	<-entered
	rec := serve(t, r, "PUT", "/v0.4/traces", v04Body("second", 2, 1), nil)
	assert.Equal(t, 200, rec.Code)
	assert.JSONEq(t, `{"rate_by_service":{"service:,env:":1}}`+"\n", rec.Body.String())
	rec = serve(t, r, "PUT", "/v0.4/traces", v04Body("third", 3, 1), map[string]string{"Datadog-Send-Real-Http-Status": "yes"})
	assert.Equal(t, 429, rec.Code)
	close(release)
	assert.Equal(t, 200, <-done)
	assert.Equal(t, int64(1), blocking.spans.Load(), "only the first request's span reached the pipeline")
}

type blockingConsumer struct {
	release <-chan struct{}
	entered func()
	spans   atomic.Int64
}

func (c *blockingConsumer) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
func (c *blockingConsumer) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	c.entered()
	<-c.release
	c.spans.Add(int64(td.SpanCount()))
	return nil
}

// startServer runs the receiver on a real listener, so confighttp's limits and timeouts apply.
func startServer(t *testing.T, cfg *Config, next consumer.Traces) *ddReceiver {
	t.Helper()
	r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), next)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return r
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// TestLimits is test vector 12 through a real server: 413 above max_request_body_size, 408 for a
// client that stops sending its body.
func TestLimits(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = freeAddr(t)
	cfg.MaxRequestBodySize = 1 << 20
	cfg.ReadTimeout = 300 * time.Millisecond
	sink := new(consumertest.TracesSink)
	startServer(t, cfg, sink)
	url := "http://" + cfg.NetAddr.Endpoint + "/v0.4/traces"

	resp, err := http.Post(url, "application/msgpack", bytes.NewReader(make([]byte, 1<<20+1)))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 413, resp.StatusCode)
	assert.Equal(t, "payload-too-large\n", string(body))

	conn, err := net.Dial("tcp", cfg.NetAddr.Endpoint)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "PUT /v0.4/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\nContent-Length: 100\r\n\r\n\x91")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	reply, _ := io.ReadAll(conn)
	assert.Contains(t, string(reply), "408 Request Timeout")
	assert.Zero(t, sink.SpanCount())
}

func TestUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "apm.socket")
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = path
	cfg.NetAddr.Transport = "unix"
	sink := new(consumertest.TracesSink)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	for round := range 2 { // the second start must not trip over the first's socket
		r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), sink)
		require.NoError(t, err)
		require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o722), fi.Mode().Perm(), "any user may connect, as to the agent's socket")
		resp, err := client.Post("http://unix/v0.4/traces", "application/msgpack", bytes.NewReader(v04Body("u", uint64(round+1), 1)))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
		require.NoError(t, r.Shutdown(context.Background()))
	}
	assert.Equal(t, 2, sink.SpanCount())
}

func TestStartFailsOnBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = l.Addr().String()
	r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), new(consumertest.TracesSink))
	require.NoError(t, err)
	err = r.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "address already in use")
	require.NoError(t, r.Shutdown(context.Background()))
}

// contractGenerator sends v0.4 payloads like a tracer that asks for real statuses: it retries
// refusals (429) and gives up on 400.
type contractGenerator struct {
	url   string
	seq   atomic.Int64
	trace atomic.Uint64
}

func (g *contractGenerator) Start() {}
func (g *contractGenerator) Stop()  {}
func (g *contractGenerator) Generate() []receivertest.UniqueIDAttrVal {
	prefix := fmt.Sprintf("g%d-", g.seq.Add(1))
	body := v04Body(prefix, g.trace.Add(1), 2)
	for {
		req, _ := http.NewRequest(http.MethodPut, g.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/msgpack")
		req.Header.Set("Datadog-Send-Real-Http-Status", "true")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			break
		}
	}
	return []receivertest.UniqueIDAttrVal{receivertest.UniqueIDAttrVal(prefix + "0"), receivertest.UniqueIDAttrVal(prefix + "1")}
}

func TestConsumeContract(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = freeAddr(t)
	receivertest.CheckConsumeContract(receivertest.CheckConsumeContractParams{
		T: t, Factory: NewFactory(), Signal: pipeline.SignalTraces, Config: cfg,
		Generator:     &contractGenerator{url: "http://" + cfg.NetAddr.Endpoint + "/v0.4/traces"},
		GenerateCount: 200,
	})
}

func sumInt(t *testing.T, m any) int64 {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	// metricdata.Sum[int64] → {"DataPoints":[{"Value":n,...}]}
	var s struct {
		Data struct {
			DataPoints []struct{ Value int64 }
		}
	}
	require.NoError(t, json.Unmarshal(b, &s))
	var total int64
	for _, dp := range s.Data.DataPoints {
		total += dp.Value
	}
	return total
}

func nopSettings() receiver.Settings { return receivertest.NewNopSettings(metadata.Type) }

// TestConcurrentRequestsKeepTheirSpans sends requests from several goroutines: the decoders'
// memory is reused across requests once they are translated, and no span may end up with
// another request's values.
func TestConcurrentRequestsKeepTheirSpans(t *testing.T) {
	sink := new(consumertest.TracesSink)
	r := newTestReceiver(t, createDefaultConfig().(*Config), sink)
	const clients, requests, spans = 4, 25, 7
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range requests {
				prefix := fmt.Sprintf("c%d-r%d-", c, i)
				assert.Equal(t, http.StatusOK, serve(t, r, "PUT", "/v0.4/traces", v04Body(prefix, uint64(1+c*requests+i), spans), nil).Code)
			}
		})
	}
	wg.Wait()

	seen := map[string]bool{}
	for _, td := range sink.AllTraces() {
		ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < ss.Len(); i++ {
			id, ok := ss.At(i).Attributes().Get(receivertest.UniqueIDAttrName)
			require.True(t, ok)
			// The span id is i+1 within its request, and the trace id tells the request.
			n := int(ss.At(i).TraceID()[15]) - 1 // the trace ids are below 256
			want := fmt.Sprintf("c%d-r%d-%d", n/requests, n%requests, ss.At(i).SpanID()[7]-1)
			assert.Equal(t, want, id.Str())
			seen[id.Str()] = true
		}
	}
	assert.Len(t, seen, clients*requests*spans)
}

// TestDroppedSpansAreCountedAndLogged: what the receiver drops (zero ids, nil entries) is counted
// per reason in its own metric and logged; the rest is delivered.
func TestDroppedSpansAreCountedAndLogged(t *testing.T) {
	span := func(traceID uint64) []byte { return v04Body("d", traceID, 1)[2:] } // without the two array headers
	body := msgp.AppendArrayHeader(nil, 1)
	body = msgp.AppendArrayHeader(body, 5)
	body = msgp.AppendNil(body)
	body = append(body, span(7)...)
	body = msgp.AppendNil(body)
	body = append(body, span(0)...)
	body = msgp.AppendNil(body)

	set, tel, logs := observedSettings(t)
	next := new(consumertest.TracesSink)
	r, err := newReceiver(createDefaultConfig().(*Config), set, next)
	require.NoError(t, err)
	rec := serve(t, r, "PUT", "/v0.4/traces", body, nil)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	assert.Equal(t, 1, next.SpanCount())

	m, err := tel.GetMetric("otelcol.receiver.ddtrace.spans.dropped")
	require.NoError(t, err)
	got := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		endpoint, _ := dp.Attributes.Value("endpoint")
		reason, _ := dp.Attributes.Value("reason")
		got[endpoint.AsString()+"/"+reason.AsString()] += dp.Value
	}
	assert.Equal(t, map[string]int64{"v0.4/nil_span": 3, "v0.4/zero_trace_id": 1}, got)
	accepted, err := tel.GetMetric("otelcol_receiver_accepted_spans")
	require.NoError(t, err)
	assert.Equal(t, int64(1), sumInt(t, accepted), "the delivered span, in the standard metric")
	dropped := map[string]int64{}
	for _, e := range logs.FilterMessage("invalid spans dropped").All() {
		dropped[e.ContextMap()["reason"].(string)] += e.ContextMap()["spans"].(int64)
	}
	assert.Equal(t, map[string]int64{"nil_span": 3, "zero_trace_id": 1}, dropped)
}

// TestLegacySpansCountNils: /v0.1/spans regroups the spans by trace; the nulls between them are
// still counted as dropped.
func TestLegacySpansCountNils(t *testing.T) {
	set, tel, _ := observedSettings(t)
	sink := new(consumertest.TracesSink)
	r, err := newReceiver(createDefaultConfig().(*Config), set, sink)
	require.NoError(t, err)
	rec := serve(t, r, "POST", "/v0.1/spans", []byte(`[{"trace_id":1,"span_id":2},null,{"trace_id":3,"span_id":4},null]`),
		map[string]string{"Content-Type": "application/json"})
	require.Equal(t, 200, rec.Code, rec.Body.String())
	assert.Equal(t, 2, sink.SpanCount())
	m, err := tel.GetMetric("otelcol.receiver.ddtrace.spans.dropped")
	require.NoError(t, err)
	var nils int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if reason, _ := dp.Attributes.Value("reason"); reason.AsString() == "nil_span" {
			nils += dp.Value
		}
	}
	assert.Equal(t, int64(2), nils)
}

// TestClientDroppedP0IsCounted: what a tracer says it dropped before sending (unsampled traces,
// dd-trace-py with client-side stats) is counted, and the first time logged with what to change;
// bad header values count as nothing.
func TestClientDroppedP0IsCounted(t *testing.T) {
	set, tel, logs := observedSettings(t)
	r, err := newReceiver(createDefaultConfig().(*Config), set, new(consumertest.TracesSink))
	require.NoError(t, err)
	for _, h := range []map[string]string{
		{"Datadog-Client-Dropped-P0-Traces": "3", "Datadog-Client-Dropped-P0-Spans": "12"},
		{"Datadog-Client-Dropped-P0-Traces": "1", "Datadog-Client-Dropped-P0-Spans": "5"},
		{"Datadog-Client-Dropped-P0-Traces": "-4", "Datadog-Client-Dropped-P0-Spans": "lots"},
		nil,
	} {
		require.Equal(t, 200, serve(t, r, "PUT", "/v0.4/traces", v04Body("p", 1, 1), h).Code)
	}
	// Not taken: the tracer keeps its counts and sends them again with the next payload.
	bad := serve(t, r, "PUT", "/v0.4/traces", []byte{0xc1}, map[string]string{"Datadog-Client-Dropped-P0-Traces": "50", "Datadog-Client-Dropped-P0-Spans": "500"})
	require.Equal(t, 400, bad.Code)
	for name, want := range map[string]int64{"otelcol.receiver.ddtrace.client.dropped_p0_spans": 17, "otelcol.receiver.ddtrace.client.dropped_p0_traces": 4} {
		m, err := tel.GetMetric(name)
		require.NoError(t, err, name)
		var got int64
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			got += dp.Value
		}
		assert.Equal(t, want, got, name)
	}
	warnings := logs.FilterMessageSnippet("drops unsampled traces").All()
	require.Len(t, warnings, 1, "warned once")
	assert.Equal(t, int64(12), warnings[0].ContextMap()["spans"])
}

// observedSettings are receiver settings whose telemetry and warnings (and above) the test reads.
func observedSettings(t *testing.T) (receiver.Settings, *componenttest.Telemetry, *observer.ObservedLogs) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	core, logs := observer.New(zap.WarnLevel)
	set.Logger = zap.New(core)
	return set, tel, logs
}
