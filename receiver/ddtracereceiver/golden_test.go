package ddtracereceiver

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

var update = flag.Bool("update", false, "rewrite the golden expected.yaml files from the receiver's output")

// goldenCase is testdata/golden/<case>/case.json: how to send payload.json.
type goldenCase struct {
	Path     string            `json:"path"`
	Encoding string            `json:"encoding"` // json, msgpack, protobuf (AgentPayload)
	IntKeys  bool              `json:"int_keys"` // msgpack: object keys that are integers become uints (v0.5 dictionary indexes)
	Headers  map[string]string `json:"headers"`
	Status   int               `json:"status"`
}

// TestGolden sends every case in testdata/golden through the HTTP handler, with each mapping, and
// compares what reached the pipeline with expected.yaml (semconv, the default) and
// expected-datadogreceiver.yaml (rewrite with -update, then review the diff).
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/golden/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		for _, mapping := range []translator.Mapping{translator.MappingSemconv, translator.MappingDatadogReceiver} {
			t.Run(filepath.Base(dir)+"/"+string(mapping), func(t *testing.T) {
				expectedFile := filepath.Join(dir, "expected.yaml")
				if mapping != translator.MappingSemconv {
					expectedFile = filepath.Join(dir, "expected-"+string(mapping)+".yaml")
				}
				got := goldenOutput(t, dir, mapping)
				if *update {
					require.NoError(t, golden.WriteTraces(t, expectedFile, got))
				}
				expected, err := golden.ReadTraces(expectedFile)
				require.NoError(t, err)
				require.NoError(t, ptracetest.CompareTraces(expected, got))
				// CompareTraces leaves span flags out; they say which spans are entry spans.
				assert.Equal(t, spanFlags(expected), spanFlags(got), "span flags by span id")
			})
		}
	}
}

// goldenOutput sends the case in dir through a receiver with the mapping and returns what reached
// the pipeline.
func goldenOutput(t *testing.T, dir string, mapping translator.Mapping) ptrace.Traces {
	t.Helper()
	var c goldenCase
	readJSON(t, filepath.Join(dir, "case.json"), &c)
	body := encodePayload(t, filepath.Join(dir, "payload.json"), c)

	sink := new(consumertest.TracesSink)
	cfg := createDefaultConfig().(*Config)
	cfg.Mapping = mapping
	r := newTestReceiver(t, cfg, sink)
	req := httptest.NewRequest(http.MethodPut, c.Path, bytes.NewReader(body))
	if c.Encoding == "msgpack" {
		req.Header.Set("Content-Type", "application/msgpack") // as every tracer sends it
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.handler().ServeHTTP(rec, req)
	want := c.Status
	if want == 0 {
		want = http.StatusOK
	}
	require.Equal(t, want, rec.Code, rec.Body.String())

	got := ptrace.NewTraces()
	for _, td := range sink.AllTraces() {
		td.ResourceSpans().MoveAndAppendTo(got.ResourceSpans())
	}
	return got
}

// spanFlags maps every span's id to its flags.
func spanFlags(td ptrace.Traces) map[string]uint32 {
	flags := map[string]uint32{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				flags[span.TraceID().String()+"/"+span.SpanID().String()] = span.Flags()
			}
		}
	}
	return flags
}

func newTestReceiver(t *testing.T, cfg *Config, next *consumertest.TracesSink) *ddReceiver {
	t.Helper()
	r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), next)
	require.NoError(t, err)
	return r
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	require.NoError(t, dec.Decode(v), path)
}

// encodePayload turns payload.json into the wire encoding of the case.
func encodePayload(t *testing.T, path string, c goldenCase) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	switch c.Encoding {
	case "json":
		return raw
	case "protobuf":
		var ap pb.AgentPayload
		require.NoError(t, protojson.Unmarshal(raw, &ap))
		b, err := ap.MarshalVT()
		require.NoError(t, err)
		return b
	case "msgpack":
		var v any
		readJSON(t, path, &v)
		b, err := appendMsgpack(nil, v, c.IntKeys)
		require.NoError(t, err)
		return b
	}
	t.Fatalf("unknown encoding %q", c.Encoding)
	return nil
}

// appendMsgpack encodes decoded JSON as msgpack: non-negative integers as uint, negative ones as
// int, other numbers as float64, object keys sorted.
func appendMsgpack(b []byte, v any, intKeys bool) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return msgp.AppendNil(b), nil
	case bool:
		return msgp.AppendBool(b, t), nil
	case string:
		return msgp.AppendString(b, t), nil
	case json.Number:
		if u, err := strconv.ParseUint(t.String(), 10, 64); err == nil {
			return msgp.AppendUint64(b, u), nil
		}
		if i, err := t.Int64(); err == nil {
			return msgp.AppendInt64(b, i), nil
		}
		f, err := t.Float64()
		return msgp.AppendFloat64(b, f), err
	case []any:
		b = msgp.AppendArrayHeader(b, uint32(len(t)))
		for _, e := range t {
			var err error
			if b, err = appendMsgpack(b, e, intKeys); err != nil {
				return nil, err
			}
		}
		return b, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = msgp.AppendMapHeader(b, uint32(len(t)))
		for _, k := range keys {
			if u, err := strconv.ParseUint(k, 10, 32); intKeys && err == nil {
				b = msgp.AppendUint64(b, u)
			} else {
				b = msgp.AppendString(b, k)
			}
			var err error
			if b, err = appendMsgpack(b, t[k], intKeys); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("cannot encode %T", v)
}
