package ratesampler

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tracegate/tracegate/internal/ddsampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// t0 starts a bucket (a multiple of 5 s), so that bucket k begins at t0 + 5k s.
var t0 = time.Unix(1_700_000_000, 0)

func bucket(k int) time.Time { return t0.Add(time.Duration(k) * ddsampler.BucketSeconds * time.Second) }

// chunks is n one-span chunks of service without env at priority prio, as v0.4 sends them (the
// priority in the root's metric).
func chunks(service string, prio float64, n int) []payload.Chunk {
	out := make([]payload.Chunk, n)
	for i := range out {
		s := payload.Span{Service: service, TraceID: uint64(i + 1), SpanID: uint64(i + 1)}
		s.Metrics = []payload.KF{{Key: payload.PriorityMetric, Value: prio}}
		out[i] = payload.Chunk{Priority: payload.PriorityNone, Spans: []payload.Span{s}}
	}
	return out
}

// traffic is what each service sends in one bucket: chunks per 5 s.
type traffic map[string]int

// payload is the traffic in one request, services in name order.
func (tr traffic) payload() []payload.Payload {
	var p payload.Payload
	for _, svc := range slices.Sorted(maps.Keys(tr)) {
		p.Chunks = append(p.Chunks, chunks(svc, 1, tr[svc])...)
	}
	return []payload.Payload{p}
}

// table is the rates the sampler currently replies with.
func table(t *testing.T, s *Sampler) map[string]float64 {
	t.Helper()
	var body struct {
		Rates map[string]float64 `json:"rate_by_service"`
	}
	require.NoError(t, json.Unmarshal(s.Reply().Body, &body))
	return body.Rates
}

// run counts each bucket's traffic at its start, and returns the table after each.
func run(t *testing.T, s *Sampler, buckets []traffic) []map[string]float64 {
	t.Helper()
	var tables []map[string]float64
	for k, tr := range buckets {
		s.Count(bucket(k), tr.payload(), 0)
		tables = append(tables, table(t, s))
	}
	return tables
}

func repeat(tr traffic, n int) []traffic {
	out := make([]traffic, n)
	for i := range out {
		out[i] = tr
	}
	return out
}

func newSampler(target float64, limit int) *Sampler {
	return New(Config{Enabled: true, TargetTracesPerSecond: target, MaxServices: limit})
}

func TestRates(t *testing.T) {
	for _, tt := range []struct {
		name    string
		target  float64
		buckets []traffic
		want    map[string]float64 // the table after the last bucket
	}{
		{
			// 100 and 1 trace/s against 10: the quiet one keeps everything and leaves 9 to the
			// busy one; the default is the lowest rate, below 10 / 101.
			name: "busy signature limited, quiet one kept", target: 10,
			buckets: repeat(traffic{"busy": 500, "quiet": 5}, 3),
			want: map[string]float64{
				"service:busy,env:none": 0.09, "service:busy,env:": 0.09,
				"service:quiet,env:none": 1, "service:quiet,env:": 1,
				"service:,env:": 0.09,
			},
		},
		{
			// 1, 2 and 100 traces/s against 10: 10/3 each, the 1 and 2 unused go to the busiest,
			// which gets 7.
			name: "unused share goes to the busiest", target: 10,
			buckets: repeat(traffic{"a": 5, "b": 10, "c": 500}, 2),
			want: map[string]float64{
				"service:a,env:none": 1, "service:a,env:": 1, "service:b,env:none": 1, "service:b,env:": 1,
				"service:c,env:none": 0.07, "service:c,env:": 0.07, "service:,env:": 0.07,
			},
		},
		{
			name: "everything below the target", target: 10,
			buckets: repeat(traffic{"a": 20, "b": 20}, 2),
			want: map[string]float64{
				"service:a,env:none": 1, "service:a,env:": 1, "service:b,env:none": 1, "service:b,env:": 1,
				"service:,env:": 1,
			},
		},
		{
			// One signature first seen in this bucket has no rate yet: only the default, from all
			// the traffic counted (the request that began the bucket included).
			name: "first request", target: 10,
			buckets: []traffic{{"busy": 100}},
			want:    map[string]float64{"service:,env:": 0.5},
		},
		{
			// Six buckets later a quiet, unconstrained signature has left the window: dropped.
			name: "quiet signature forgotten", target: 10,
			buckets: append([]traffic{{"gone": 5, "stays": 5}}, repeat(traffic{"stays": 5}, 8)...),
			want:    map[string]float64{"service:stays,env:none": 1, "service:stays,env:": 1, "service:,env:": 1},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tables := run(t, newSampler(tt.target, 100), tt.buckets)
			assert.InDeltaMapValues(t, tt.want, tables[len(tables)-1], 1e-9)
			assert.Len(t, tables[len(tables)-1], len(tt.want))
		})
	}
}

// TestBusySignatureWithinRotations: a service at 100 traces/s with a target of 5 gets its rate
// at the first computation after it began, and keeps it while its traffic does.
func TestBusySignatureWithinRotations(t *testing.T) {
	s := newSampler(5, 100)
	tables := run(t, s, repeat(traffic{"busy": 500, "quiet": 1}, 4))
	for k, want := range []float64{0, 0.048, 0.048, 0.048} { // busy gets 5 − 0.2 of its 100
		got, ok := tables[k]["service:busy,env:"]
		if want == 0 {
			assert.False(t, ok, "bucket %d: no rate before a bucket was complete", k)
			continue
		}
		assert.InDelta(t, want, got, 1e-9, "bucket %d", k)
		assert.InDelta(t, 1.0, tables[k]["service:quiet,env:"], 1e-9, "bucket %d", k)
	}
}

// TestRateRiseCapped: after a burst, the rate climbs back by at most 20 % a bucket once the burst
// has left the six-bucket window, while a fall applies at once.
func TestRateRiseCapped(t *testing.T) {
	s := newSampler(10, 100)
	buckets := append(repeat(traffic{"svc": 1000}, 2), repeat(traffic{"svc": 10}, 20)...)
	tables := run(t, s, buckets)
	var got []float64
	for _, tb := range tables[1:] {
		got = append(got, tb["service:svc,env:"])
	}
	want := []float64{
		0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, // bucket 1 (200/s) in the window: 10/200
		0.06, 0.072, 0.0864, 0.10368, 0.124416, 0.1492992, 0.17915904, 0.214990848, 0.2579890176,
		0.30958682112, 0.371504185344, 0.4458050224128, 0.53496602689536, 0.641959232274432,
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-12, "bucket %d", i+1)
	}
	// A new burst brings the rate down in one bucket.
	s.Count(bucket(len(buckets)), traffic{"svc": 5000}.payload(), 0)
	s.Count(bucket(len(buckets)+1), traffic{"svc": 10}.payload(), 0)
	assert.InDelta(t, 0.01, table(t, s)["service:svc,env:"], 1e-12)
}

// TestMaxServices: pairs past the limit get no rate of their own (their tracers use the default)
// but count towards it, and are reported as untracked.
func TestMaxServices(t *testing.T) {
	s := newSampler(10, 2)
	var untracked int
	for k, tr := range []traffic{{"a": 5, "b": 5}, {"a": 5, "b": 5, "c": 1000}, {"a": 5, "b": 5, "c": 1000}} {
		c := s.Count(bucket(k), tr.payload(), 0)
		untracked += c.Untracked
		assert.True(t, c.Rotated)
		assert.Equal(t, 2, c.Services)
	}
	tb := table(t, s)
	assert.Len(t, tb, 5, "a and b with and without env, and the default: %v", tb)
	// a and b keep everything; all the traffic (202/s) sets the default, which c's tracers use.
	assert.InDelta(t, 1.0, tb["service:a,env:"], 1e-9)
	assert.InDelta(t, 10.0/202, tb["service:,env:"], 1e-9)
	assert.Equal(t, 2*1000, untracked)
}

func TestPriorities(t *testing.T) {
	for _, tt := range []struct {
		name    string
		chunk   payload.Chunk
		counted bool
	}{
		{"auto keep", chunks("s", 1, 1)[0], true},
		{"auto reject", chunks("s", 0, 1)[0], true},
		{"user keep", chunks("s", 2, 1)[0], false},
		{"user reject", chunks("s", -1, 1)[0], false},
		{"no priority", payload.Chunk{Priority: payload.PriorityNone, Spans: []payload.Span{{Service: "s", SpanID: 1}}}, false},
		{"v0.7 chunk priority", payload.Chunk{Priority: 0, Spans: []payload.Span{{Service: "s", SpanID: 1}}}, true},
		{"v0.7 chunk priority wins", payload.Chunk{Priority: 2, Spans: chunks("s", 1, 1)[0].Spans}, false},
		{"empty chunk", payload.Chunk{Priority: 1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSampler(10, 100)
			s.Count(bucket(0), []payload.Payload{{Chunks: []payload.Chunk{tt.chunk}}}, 0)
			assert.Equal(t, tt.counted, s.budget.TotalInBucket() > 0)
		})
	}
}

func TestWeights(t *testing.T) {
	root := func(metrics ...payload.KF) payload.Chunk {
		return payload.Chunk{Priority: 1, Spans: []payload.Span{{Service: "s", SpanID: 1, Metrics: metrics}}}
	}
	for _, tt := range []struct {
		name      string
		chunks    []payload.Chunk
		droppedP0 int64
		want      float64
	}{
		{"one chunk", []payload.Chunk{root()}, 0, 1},
		{"client rate 0.25", []payload.Chunk{root(payload.KF{Key: "_sample_rate", Value: 0.25})}, 0, 4},
		{"client and pre-sampler rates", []payload.Chunk{root(payload.KF{Key: "_sample_rate", Value: 0.5}, payload.KF{Key: "_dd1.sr.rapre", Value: 0.5})}, 0, 4},
		{"rate 0 ignored", []payload.Chunk{root(payload.KF{Key: "_sample_rate", Value: 0})}, 0, 1},
		{"rate above 1 ignored", []payload.Chunk{root(payload.KF{Key: "_sample_rate", Value: 2})}, 0, 1},
		{"dropped P0s spread over the chunks", []payload.Chunk{root(), root()}, 6, 8},
		// The agent divides by every chunk of the payload, counted or not.
		{"dropped P0s share of an uncounted chunk lost", []payload.Chunk{root(), {Priority: 2, Spans: []payload.Span{{SpanID: 1}}}}, 6, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSampler(10, 100)
			s.Count(bucket(0), []payload.Payload{{Chunks: tt.chunks}}, tt.droppedP0)
			got, _ := s.budget.InBucket(Signature{"s", DefaultEnv})
			assert.InDelta(t, tt.want, got, 1e-12)
		})
	}
}

func TestSignatureOfChunk(t *testing.T) {
	span := func(id, parent uint64, service, env string) payload.Span {
		s := payload.Span{SpanID: id, ParentID: parent, Service: service}
		if env != "" {
			s.Meta = []payload.KV{{Key: "env", Value: env}}
		}
		return s
	}
	long := strings.Repeat("é", 150) // 300 bytes
	for _, tt := range []struct {
		name   string
		p      payload.Payload
		want   Signature
		wantOK bool
	}{
		{"root's service and env", payload.Payload{Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{span(2, 1, "child", "c"), span(1, 0, "root", "prod")}}}}, Signature{"root", "prod"}, true},
		{"payload env first (v0.7)", payload.Payload{Env: "staging", Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{span(1, 0, "root", "prod")}}}}, Signature{"root", "staging"}, true},
		{"env from another span", payload.Payload{Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{span(1, 0, "root", ""), span(2, 1, "child", "qa")}}}}, Signature{"root", "qa"}, true},
		{"default env", payload.Payload{Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{span(1, 0, "root", "")}}}}, Signature{"root", "none"}, true},
		{"partial flush: the span whose parent is elsewhere", payload.Payload{Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{span(3, 2, "leaf", ""), span(2, 9, "local-root", ""), span(4, 2, "leaf", "")}}}}, Signature{"local-root", "none"}, true},
		{"long names cut at a character", payload.Payload{Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{span(1, 0, long, long)}}}}, Signature{long[:100], long[:200]}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSampler(10, 100)
			s.Count(bucket(0), []payload.Payload{tt.p}, 0)
			_, ok := s.budget.InBucket(tt.want)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, 1, s.budget.Signatures())
		})
	}
}

func TestVersion(t *testing.T) {
	s := newSampler(10, 100)
	assert.Empty(t, s.Reply().Version, "no version before the first rates, as the agent")
	assert.JSONEq(t, `{"rate_by_service":{}}`, string(s.Reply().Body))

	c := s.Count(bucket(0), traffic{"a": 5}.payload(), 0)
	assert.True(t, c.Rotated)
	assert.True(t, c.Changed)
	first := s.Reply().Version
	assert.NotEmpty(t, first)

	c = s.Count(bucket(0).Add(time.Second), traffic{"a": 5}.payload(), 0)
	assert.False(t, c.Rotated, "same bucket")

	c = s.Count(bucket(1), traffic{"a": 5}.payload(), 0)
	assert.True(t, c.Changed, "a got its rate")
	second := s.Reply().Version
	assert.NotEqual(t, first, second)

	c = s.Count(bucket(2), traffic{"a": 5}.payload(), 0)
	assert.True(t, c.Rotated)
	assert.False(t, c.Changed, "same rates: same version")
	assert.Equal(t, second, s.Reply().Version)

	assert.NotEqual(t, second, newSampler(10, 100).prefix+"-2", "another process has other versions")
}

// TestClockBackwards: a clock stepped back keeps counting in the current bucket.
func TestClockBackwards(t *testing.T) {
	s := newSampler(10, 100)
	s.Count(bucket(5), traffic{"a": 5}.payload(), 0)
	c := s.Count(bucket(2), traffic{"a": 5}.payload(), 0)
	assert.False(t, c.Rotated)
	got, _ := s.budget.InBucket(Signature{"a", DefaultEnv})
	assert.InDelta(t, 10.0, got, 1e-12)
}

// TestLongGap: after more than the window without traffic every bucket is empty again.
func TestLongGap(t *testing.T) {
	s := newSampler(10, 100)
	run(t, s, repeat(traffic{"a": 1000}, 3))
	s.Count(bucket(100), traffic{"a": 5}.payload(), 0)
	tb := table(t, s)
	assert.InDelta(t, 0.05*1.2, tb["service:a,env:"], 1e-12, "the burst left the window; the rise is capped")
	assert.InDelta(t, 0.06, tb["service:,env:"], 1e-12)
}

// TestConcurrentCount: requests count and read the table at once (run with -race); every chunk
// is counted once.
func TestConcurrentCount(t *testing.T) {
	s := newSampler(10, 100)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 50 {
				s.Count(bucket(0), traffic{fmt.Sprint("svc-", g%3): 2}.payload(), 0)
				_ = s.Reply().Body
			}
		})
	}
	wg.Wait()
	// 8 goroutines × 50 requests × 2 chunks.
	assert.InDelta(t, 800.0, s.budget.TotalInBucket(), 0)
}
