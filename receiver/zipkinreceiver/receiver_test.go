package zipkinreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	contribzipkin "github.com/open-telemetry/opentelemetry-collector-contrib/receiver/zipkinreceiver"
	zipkinmodel "github.com/openzipkin/zipkin-go/model"
	zipkinproto "github.com/openzipkin/zipkin-go/proto/zipkin_proto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/receiver/zipkinreceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/zipkinreceiver/internal/metadatatest"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for name, check := range map[string]func(*Config){
		"": func(c *Config) {
			assert.Equal(t, "localhost:9411", c.NetAddr.Endpoint)
			assert.False(t, c.ParseStringTags)
		},
		"custom": func(c *Config) {
			assert.Equal(t, "0.0.0.0:19411", c.NetAddr.Endpoint)
			assert.True(t, c.ParseStringTags)
			assert.EqualValues(t, 8<<20, c.MaxRequestBodySize)
		},
	} {
		cfg := createDefaultConfig().(*Config)
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(cfg))
		require.NoError(t, xconfmap.Validate(cfg))
		check(cfg)
	}
}

// freeEndpoint is a loopback address with a free port.
func freeEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// started runs a receiver the factory makes (ours or contrib's) into next; it returns its URL.
func started(t *testing.T, f receiver.Factory, next consumer.Traces) string {
	t.Helper()
	return startedWith(t, f, next, receivertest.NewNopSettings(f.Type()))
}

func startedWith(t *testing.T, f receiver.Factory, next consumer.Traces, set receiver.Settings) string {
	t.Helper()
	cfg := f.CreateDefaultConfig()
	endpoint := freeEndpoint(t)
	switch c := cfg.(type) {
	case *Config:
		c.NetAddr.Endpoint = endpoint
	case *contribzipkin.Config:
		c.NetAddr.Endpoint = endpoint
	}
	r, err := f.CreateTraces(context.Background(), set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return "http://" + endpoint
}

func spans() []zipkinmodel.SpanModel {
	parent := zipkinmodel.ID(7)
	start := time.UnixMicro(1_765_000_000_000_000)
	return []zipkinmodel.SpanModel{{
		SpanContext: zipkinmodel.SpanContext{TraceID: zipkinmodel.TraceID{High: 1, Low: 2}, ID: 3, ParentID: &parent},
		Name:        "get /cart", Kind: zipkinmodel.Server, Timestamp: start, Duration: 25 * time.Millisecond,
		LocalEndpoint:  &zipkinmodel.Endpoint{ServiceName: "cart", IPv4: net.IPv4(10, 0, 0, 1), Port: 8080},
		RemoteEndpoint: &zipkinmodel.Endpoint{ServiceName: "web", IPv6: net.ParseIP("2001:db8::1")},
		Annotations:    []zipkinmodel.Annotation{{Timestamp: start.Add(time.Millisecond), Value: "cache miss"}},
		Tags:           map[string]string{"http.method": "GET", "http.status_code": "200", "error": "timeout"},
	}, {
		SpanContext: zipkinmodel.SpanContext{TraceID: zipkinmodel.TraceID{Low: 2}, ID: 4},
		Name:        "select", Kind: zipkinmodel.Client, Timestamp: start, Duration: time.Millisecond,
		LocalEndpoint: &zipkinmodel.Endpoint{ServiceName: "cart"},
	}}
}

// bodies are the same spans in each of the API's formats: path, media type, body.
func bodies(t *testing.T) map[string][3]string {
	v2json, err := json.Marshal(spans())
	require.NoError(t, err)
	var protoSpans []*zipkinmodel.SpanModel
	for _, s := range spans() {
		protoSpans = append(protoSpans, &s)
	}
	v2proto, err := zipkinproto.SpanSerializer{}.Serialize(protoSpans)
	require.NoError(t, err)
	v1json := `[{"traceId":"0000000000000002","id":"0000000000000005","name":"get","timestamp":1765000000000000,"duration":1000,` +
		`"annotations":[{"timestamp":1765000000000000,"value":"sr","endpoint":{"serviceName":"cart","ipv4":"10.0.0.1","port":8080}}],` +
		`"binaryAnnotations":[{"key":"http.path","value":"/cart","endpoint":{"serviceName":"cart"}}]}]`
	return map[string][3]string{
		"v2 json":  {"/api/v2/spans", "application/json", string(v2json)},
		"v2 proto": {"/api/v2/spans", "application/x-protobuf", string(v2proto)},
		"v1 json":  {"/api/v1/spans", "application/json", v1json},
	}
}

func post(t *testing.T, url, path, mediaType string, body []byte, gz bool) *http.Response {
	t.Helper()
	if gz {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write(body)
		require.NoError(t, w.Close())
		body = b.Bytes()
	}
	req, err := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", mediaType)
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// TestSameTracesAsContribs: every format, plain and gzipped, gives the traces the contrib
// receiver (v0.148.0) gives, with its 202.
func TestSameTracesAsContribs(t *testing.T) {
	ours, theirs := &consumertest.TracesSink{}, &consumertest.TracesSink{}
	ourURL, theirURL := started(t, NewFactory(), ours), started(t, contribzipkin.NewFactory(), theirs)
	for name, b := range bodies(t) {
		for _, gz := range []bool{false, true} {
			ours.Reset()
			theirs.Reset()
			require.Equal(t, http.StatusAccepted, post(t, theirURL, b[0], b[1], []byte(b[2]), gz).StatusCode, name)
			require.Equal(t, http.StatusAccepted, post(t, ourURL, b[0], b[1], []byte(b[2]), gz).StatusCode, name)
			require.Len(t, ours.AllTraces(), 1)
			require.Equal(t, asMaps(t, theirs.AllTraces()[0]), asMaps(t, ours.AllTraces()[0]), "%s (gzip %v)", name, gz)
		}
	}
}

func TestRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		next       error
		body       string
		wantStatus int
	}{
		"undecodable":      {body: `[{"traceId":`, wantStatus: http.StatusBadRequest},
		"no span id":       {body: `[{"traceId":"1"}]`, wantStatus: http.StatusBadRequest},
		"refused for now":  {next: errors.New("buffer full"), body: `[{"traceId":"1","id":"2"}]`, wantStatus: http.StatusTooManyRequests},
		"refused for good": {next: consumererror.NewPermanent(errors.New("no")), body: `[{"traceId":"1","id":"2"}]`, wantStatus: http.StatusBadRequest},
		"taken":            {body: `[{"traceId":"1","id":"2"}]`, wantStatus: http.StatusAccepted},
		"empty list":       {body: `[]`, wantStatus: http.StatusAccepted},
	} {
		t.Run(name, func(t *testing.T) {
			var next consumer.Traces = &consumertest.TracesSink{}
			if tc.next != nil {
				next = consumertest.NewErr(tc.next)
			}
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			url := startedWith(t, NewFactory(), next, metadatatest.NewSettings(tel))
			resp := post(t, url, "/api/v2/spans", "application/json", []byte(tc.body), false)
			assert.Equal(t, tc.wantStatus, resp.StatusCode)
			if tc.wantStatus == http.StatusTooManyRequests {
				assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			}
			metadatatest.AssertEqualReceiverZipkinRequests(t, tel, []metricdata.DataPoint[int64]{{
				Value: 1, Attributes: attribute.NewSet(
					attribute.Int("http.response.status_code", tc.wantStatus), attribute.String("transport", "http_v2_json")),
			}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		})
	}
}

// asMaps is what td holds, with every attribute map as a Go map: the translator writes a span's
// tags in Go's random map order, so the order of attributes is not compared.
func asMaps(t *testing.T, td ptrace.Traces) []any {
	t.Helper()
	var out []any
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				var events []any
				for _, ev := range s.Events().All() {
					events = append(events, []any{ev.Name(), ev.Timestamp(), ev.Attributes().AsRaw()})
				}
				out = append(out, []any{
					rs.Resource().Attributes().AsRaw(), ss.Scope().Name(), s.TraceID(), s.SpanID(), s.ParentSpanID(),
					s.Name(), s.Kind(), s.StartTimestamp(), s.EndTimestamp(), s.Status().Code(), s.Status().Message(),
					s.Attributes().AsRaw(), events, s.Links().Len(),
				})
			}
		}
	}
	return out
}
