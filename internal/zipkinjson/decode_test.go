package zipkinjson

import (
	"encoding/json"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	zipkinmodel "github.com/openzipkin/zipkin-go/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin/zipkinv2"
)

// randomSpans are spans as zipkin-go's reporter serializes them (what zipkin-go clients send).
func randomSpans(rng *rand.Rand, n int) []byte {
	kinds := []zipkinmodel.Kind{zipkinmodel.Client, zipkinmodel.Server, zipkinmodel.Producer, zipkinmodel.Consumer, zipkinmodel.Undetermined}
	spans := make([]zipkinmodel.SpanModel, n)
	for i := range spans {
		s := &spans[i]
		s.TraceID = zipkinmodel.TraceID{High: rng.Uint64() * uint64(rng.IntN(2)), Low: rng.Uint64() | 1}
		s.ID = zipkinmodel.ID(rng.Uint64() | 1)
		if rng.IntN(3) > 0 {
			p := zipkinmodel.ID(rng.Uint64() | 1)
			s.ParentID = &p
		}
		s.Name = []string{"get /api", "SELECT", "", "naïve \"quoted\" <x>", "bad\xffutf8"}[rng.IntN(5)]
		s.Kind = kinds[rng.IntN(len(kinds))]
		s.Timestamp = time.UnixMicro(1_700_000_000_000_000 + rng.Int64N(1e12))
		s.Duration = time.Duration(rng.Int64N(5e9)).Truncate(time.Microsecond)
		s.Shared, s.Debug = rng.IntN(4) == 0, rng.IntN(8) == 0
		s.LocalEndpoint = &zipkinmodel.Endpoint{ServiceName: "svc" + string(rune('a'+rng.IntN(3))), IPv4: net.IPv4(10, 0, 0, byte(rng.IntN(255))), Port: uint16(rng.IntN(65535))}
		if rng.IntN(2) == 0 {
			s.RemoteEndpoint = &zipkinmodel.Endpoint{ServiceName: "db", IPv6: net.ParseIP("2001:db8::1")}
		}
		if rng.IntN(2) == 0 {
			s.Annotations = []zipkinmodel.Annotation{{Timestamp: s.Timestamp.Add(time.Millisecond), Value: "cache miss"}}
		}
		s.Tags = map[string]string{"http.method": "GET", "http.path": "/api/v1/orders", "sql": `select "a" from t where x = '\n'`}
		if rng.IntN(3) == 0 {
			s.Tags["error"] = "boom"
		}
	}
	b, err := json.Marshal(spans)
	if err != nil {
		panic(err)
	}
	return b
}

// viaEncodingJSON is what the contrib translator decodes.
func viaEncodingJSON(b []byte) ([]*zipkinmodel.SpanModel, error) {
	var spans []*zipkinmodel.SpanModel
	err := json.Unmarshal(b, &spans)
	return spans, err
}

func TestDecodeIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fast := 0
	for range 200 {
		body := randomSpans(rng, 1+rng.IntN(12))
		want, err := viaEncodingJSON(body)
		require.NoError(t, err)
		got, err := Decode(body)
		require.NoError(t, err)
		require.Equal(t, want, got, "%s", body)
		if _, err := decodeFast(body); err == nil {
			fast++
		}
	}
	// What zipkin-go clients send is the fast form (strings with escapes included).
	assert.Equal(t, 200, fast)
}

// TestOutsideTheFastForm: inputs encoding/json reads differently from the API's spelling, or
// refuses, go to encoding/json: the result (or the error) is its own.
func TestOutsideTheFastForm(t *testing.T) {
	const ok = `{"traceId":"a","id":"b"}`
	for name, body := range map[string]string{
		"other case key":          `[{"TraceId":"a","id":"b"}]`,
		"unknown key":             `[{"traceId":"a","id":"b","sampled":true}]`,
		"repeated key":            `[{"traceId":"a","id":"b","id":"c"}]`,
		"null parent":             `[{"traceId":"a","id":"b","parentId":null}]`,
		"empty parent":            `[{"traceId":"a","id":"b","parentId":""}]`,
		"escaped id":              `[{"traceId":"a","id":"\u0062"}]`,
		"float timestamp":         `[{"traceId":"a","id":"b","timestamp":1.5}]`,
		"negative duration":       `[{"traceId":"a","id":"b","duration":-1}]`,
		"port overflow":           `[{"traceId":"a","id":"b","localEndpoint":{"port":70000}}]`,
		"bad ip":                  `[{"traceId":"a","id":"b","localEndpoint":{"ipv4":"999.1.1.1"}}]`,
		"number tag":              `[{"traceId":"a","id":"b","tags":{"n":1}}]`,
		"repeated tag":            `[{"traceId":"a","id":"b","tags":{"k":"1","k":"2"}}]`,
		"annotation without time": `[{"traceId":"a","id":"b","annotations":[{"value":"x"}]}]`,
		"zero id":                 `[{"traceId":"a","id":"0"}]`,
		"no trace id":             `[{"traceId":"","id":"b"}]`,
		"null span":               `[null,` + ok + `]`,
		"not a list":              ok,
		"trailing garbage":        `[` + ok + `]x`,
		"truncated":               `[` + ok,
		"empty tag value escaped": `[{"traceId":"a","id":"b","tags":{"k":"\"\n\u00e9"}}]`,
		"whitespace everywhere":   " [ {\n\"traceId\" : \"a\" ,\t\"id\":\"b\" , \"debug\" : true } ] ",
		"empty list":              `[]`,
		"invalid utf-8 key":       "[{\"traceId\":\"a\",\"id\":\"b\",\"tags\":{\"k\xff\":\"v\"}}]",
	} {
		t.Run(name, func(t *testing.T) {
			want, wantErr := viaEncodingJSON([]byte(body))
			got, err := Decode([]byte(body))
			if wantErr != nil {
				require.EqualError(t, err, wantErr.Error())
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

// FuzzDecode: whatever the bytes, Decode returns what encoding/json returns (spans or error),
// and the fast form never accepts what encoding/json refuses.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 8 {
		f.Add(randomSpans(rng, 1+rng.IntN(3)))
	}
	f.Add([]byte(`[{"traceId":"a","id":"b","annotations":[{"timestamp":1,"value":"v"}],"remoteEndpoint":{"ipv6":"::1","port":0}}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := viaEncodingJSON(body)
		got, err := Decode(body)
		if wantErr != nil {
			if err == nil || err.Error() != wantErr.Error() {
				t.Fatalf("encoding/json: %v, Decode: %v", wantErr, err)
			}
			return
		}
		if err != nil || !assert.ObjectsAreEqual(want, got) {
			t.Fatalf("encoding/json: %#v\nDecode: %#v (%v)", want, got, err)
		}
	})
}

// TestTracesAreTheTranslators: through the translator, the same traces as contrib's unmarshaler.
func TestTracesAreTheTranslators(t *testing.T) {
	body := randomSpans(rand.New(rand.NewPCG(7, 8)), 20)
	for _, parse := range []bool{false, true} {
		want, err := zipkinv2.NewJSONTracesUnmarshaler(parse).UnmarshalTraces(body)
		require.NoError(t, err)
		got, err := NewUnmarshaler(parse).UnmarshalTraces(body)
		require.NoError(t, err)
		require.Equal(t, comparableTraces(t, want), comparableTraces(t, got))
	}
	_, err := NewUnmarshaler(false).UnmarshalTraces([]byte(`{`))
	require.Error(t, err)
	require.Contains(t, err.Error(), "unexpected end")
}

func BenchmarkUnmarshal(b *testing.B) {
	body := randomSpans(rand.New(rand.NewPCG(9, 10)), 10)
	for name, u := range map[string]ptrace.Unmarshaler{
		"contrib":    zipkinv2.NewJSONTracesUnmarshaler(false),
		"zipkinjson": NewUnmarshaler(false),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := u.UnmarshalTraces(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// comparableTraces is td as JSON values with every attribute list made a map: the translator writes a
// span's tags in Go's random map order.
func comparableTraces(t *testing.T, td ptrace.Traces) any {
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return attributesAsMaps(v)
}

func attributesAsMaps(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			x[k] = attributesAsMaps(item)
		}
	case []any:
		m := map[string]any{}
		for i, item := range x {
			x[i] = attributesAsMaps(item)
			if kv, ok := item.(map[string]any); ok && len(kv) == 2 && kv["key"] != nil {
				m[kv["key"].(string)] = kv["value"]
			}
		}
		if len(x) > 0 && len(m) == len(x) {
			return m
		}
	}
	return v
}
