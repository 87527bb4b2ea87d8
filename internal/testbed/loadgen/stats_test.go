package loadgen

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64 // ms, in any order
		want    LatencyStats
	}{
		{"empty", nil, LatencyStats{}},
		{"one", []float64{3}, LatencyStats{Count: 1, Mean: 3, Min: 3, P50: 3, P90: 3, P99: 3, P999: 3, Max: 3}},
		{"two", []float64{4, 2}, LatencyStats{Count: 2, Mean: 3, Min: 2, P50: 2, P90: 4, P99: 4, P999: 4, Max: 4}},
		{
			"1..100 shuffled",
			func() []float64 {
				var s []float64
				for i := 100; i >= 1; i-- {
					s = append(s, float64((i*37)%100+1))
				}
				return s
			}(),
			LatencyStats{Count: 100, Mean: 50.5, Min: 1, P50: 50, P90: 90, P99: 99, P999: 100, Max: 100},
		},
		{"outlier", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1000}, LatencyStats{Count: 10, Mean: 100.9, Min: 1, P50: 1, P90: 1, P99: 1000, P999: 1000, Max: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d []time.Duration
			for _, v := range tt.samples {
				d = append(d, ms(v))
			}
			got := Summarize(d)
			round := func(s LatencyStats) LatencyStats {
				r := func(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
				return LatencyStats{s.Count, r(s.Mean), r(s.Min), r(s.P50), r(s.P90), r(s.P99), r(s.P999), r(s.Max)}
			}
			if round(got) != tt.want {
				t.Errorf("Summarize = %+v, want %+v", round(got), tt.want)
			}
		})
	}
}

func TestPercentileNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 1000; i++ {
		s = append(s, time.Duration(i))
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{0.1, 1}, {50, 500}, {99, 990}, {99.9, 999}, {100, 1000}, {0, 1}} {
		if got := Percentile(s, tt.p); got != tt.want {
			t.Errorf("p%v = %d, want %d", tt.p, got, tt.want)
		}
	}
}

// TestRunCountsStatusesAndFreshTraces runs the generator against a server that answers 200, 429,
// 503 and 400 in turn and records each request's trace id: the counts must add up, each class must
// be counted, and no trace id may repeat although the pool holds only two payloads.
func TestRunCountsStatusesAndFreshTraces(t *testing.T) {
	var n atomic.Int64
	var mu sync.Mutex
	traces := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil || r.URL.Path != "/v1/traces" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		spans := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		tid := spans.At(0).TraceID()
		mu.Lock()
		traces[hex.EncodeToString(tid[:])]++
		mu.Unlock()
		switch n.Add(1) % 4 {
		case 0:
			w.WriteHeader(http.StatusOK)
		case 1:
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusConflict)
		}
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{
		Protocol: OTLPHTTP, Target: strings.TrimPrefix(srv.URL, "http://"),
		Concurrency: 4, Requests: 25, Spans: 3, PoolSize: 2, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Status
	if res.Requests != 100 || res.SpansSent != 300 || st.OK+st.TooMany+st.Server+st.Other+st.Transport != 100 {
		t.Fatalf("requests %d, spans %d, status %+v", res.Requests, res.SpansSent, st)
	}
	if st.OK != 25 || st.TooMany != 25 || st.Server != 25 || st.Other != 25 || st.Codes["409"] != 25 {
		t.Errorf("status %+v, want 25 of each", st)
	}
	if res.SpansAcked != 75 {
		t.Errorf("acked spans %d, want 75 (the 2xx requests')", res.SpansAcked)
	}
	if res.Latency.Count != 100 || res.Latency.Max < res.Latency.P50 || res.Latency.P50 <= 0 {
		t.Errorf("latency %+v", res.Latency)
	}
	if res.LatencyOK.Count != 25 {
		t.Errorf("2xx latency over %d requests, want the 25 taken", res.LatencyOK.Count)
	}
	if len(traces) != 100 {
		t.Errorf("%d distinct trace ids in 100 requests", len(traces))
	}
}

// TestRunTransportErrors counts requests to a closed port as transport errors.
func TestRunTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	for _, p := range []string{OTLPHTTP, OTLPGRPC, ZipkinJSON} {
		res, err := Run(context.Background(), Config{Protocol: p, Target: addr, Concurrency: 2, Requests: 3, Spans: 2, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status.Transport != 6 || res.Status.OK != 0 || len(res.Errors) == 0 {
			t.Errorf("%s: status %+v, errors %v; want 6 transport errors", p, res.Status, res.Errors)
		}
	}
}

// TestFixedRateCountsMissedRequests: in a fixed-rate run with a duration, a server that holds
// every request keeps the clients from sending what falls due; those requests are counted as
// missed and enter the latency figures (from when they were due), instead of vanishing with the
// worst latencies (coordinated omission).
func TestFixedRateCountsMissedRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		time.Sleep(150 * time.Millisecond) // a slow collector
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	// 100 requests/s for 500 ms: 50 due; one client at ≤ 7 requests/s sends at most 4 of them.
	res, err := Run(context.Background(), Config{
		Protocol: OTLPHTTP, Target: strings.TrimPrefix(srv.URL, "http://"),
		Concurrency: 1, Rate: 100, Duration: 500 * time.Millisecond, Spans: 1, PoolSize: 2, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests+res.Status.Missed != 50 || res.Status.Missed < 40 {
		t.Fatalf("sent %d, missed %d: want 50 due in all, most of them missed", res.Requests, res.Status.Missed)
	}
	if res.Latency.Count != 50 {
		t.Errorf("latency over %d requests, want every due one (50)", res.Latency.Count)
	}
	// The last request sent was due early and took 150 ms; the missed ones waited up to the end.
	if res.Latency.Max < 300 {
		t.Errorf("max latency %.0f ms: the missed requests' wait is not in it", res.Latency.Max)
	}
	// All 50 fell due in the first second, the missed ones too.
	if len(res.Timeline) != 1 || res.Timeline[0].Second != 0 || res.Timeline[0].Count != 50 || res.Timeline[0].Max != res.Latency.Max {
		t.Errorf("timeline %+v: want one window, second 0, every request in it, the run's max", res.Timeline)
	}
}

// TestTimeline: requests are grouped by the second they fell due in, whenever they finished,
// and each second is summarized on its own.
func TestTimeline(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	tests := []struct {
		name    string
		samples []Timed
		want    []WindowStats
	}{
		{name: "none", samples: nil, want: []WindowStats{}},
		{
			name: "gaps are left out, order is by second",
			samples: []Timed{
				{Due: ms(3200), Took: ms(1)},
				{Due: ms(100), Took: ms(2)},
				{Due: ms(999), Took: ms(4)}, // due in second 0, finished in second 1
				{Due: ms(1000), Took: ms(8)},
			},
			want: []WindowStats{
				{Second: 0, LatencyStats: LatencyStats{Count: 2, Mean: 3, Min: 2, P50: 2, P90: 4, P99: 4, P999: 4, Max: 4}},
				{Second: 1, LatencyStats: LatencyStats{Count: 1, Mean: 8, Min: 8, P50: 8, P90: 8, P99: 8, P999: 8, Max: 8}},
				{Second: 3, LatencyStats: LatencyStats{Count: 1, Mean: 1, Min: 1, P50: 1, P90: 1, P99: 1, P999: 1, Max: 1}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Timeline(tt.samples)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Timeline = %+v, want %+v", got, tt.want)
			}
		})
	}
}
