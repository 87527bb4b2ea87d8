package loadgen

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"
)

// TestKeptShare: the traces Kept picks are the asked share of tracegen's trace ids (those Run
// sends: tracemodel.FixID of splitmix64 of the seed plus the request's number), a lower fraction keeps a
// subset of a higher one's, and 1 keeps every trace.
func TestKeptShare(t *testing.T) {
	const n = 200_000
	for _, seed := range []uint64{1, 20261130} {
		for _, fraction := range []float64{0.01, 0.1, 0.5, 1} {
			kept := 0
			for k := range uint64(n) {
				lo := tracemodel.FixID(splitmix64(seed + k))
				if Kept(lo, fraction) {
					kept++
					if fraction < 1 && !Kept(lo, math.Min(1, fraction*2)) {
						t.Errorf("seed %d: %x kept at %g, not at %g", seed, lo, fraction, fraction*2)
					}
				}
			}
			// The binomial's standard deviation is at most 112 of 200,000; 5 of them is far
			// outside chance.
			if got, want := float64(kept), fraction*n; math.Abs(got-want) > 5*math.Sqrt(n*fraction*(1-fraction))+0.5 {
				t.Errorf("seed %d, fraction %g: %d of %d kept, want about %.0f", seed, fraction, kept, n, want)
			}
		}
	}
}

// TestPrioritiesOnTheWire decodes requests of a sampled pool after the per-request rewrite: the
// chunk's first span carries priority 2 where Kept says so and -1 elsewhere, no other span
// carries a priority or the sampling.priority tag, Request.Kept agrees, the same id always gives
// the same bytes, and the pooled payload is left as it was.
func TestPrioritiesOnTheWire(t *testing.T) {
	for _, protocol := range []string{DDTraceV04, DDTraceV05} {
		t.Run(protocol, func(t *testing.T) {
			pool, err := newPool(t.Context(), protocol, "checkout", 4, 10, 42, 0.3)
			if err != nil {
				t.Fatal(err)
			}
			var req, again Request
			counts := map[float64]int{}
			for k := range uint64(300) {
				payload := &pool.Payloads[k%uint64(len(pool.Payloads))]
				orig := bytes.Clone(payload.Parts[0])
				lo := splitmix64(7 + k)
				req.Fill(payload, 0xabc, lo)
				got := decode(t, protocol, req.Parts)
				want := float64(PriorityUserReject)
				if Kept(tracemodel.FixID(lo), 0.3) {
					want = PriorityUserKeep
				}
				counts[want]++
				if req.Kept != (want == PriorityUserKeep) {
					t.Errorf("request %d: Kept %v with priority %g", k, req.Kept, want)
				}
				for i, s := range got {
					p, ok := s.ddMetrics["_sampling_priority_v1"]
					if i == 0 && (!ok || p != want) {
						t.Errorf("request %d: first span's priority %g (present %v), want %g", k, p, ok, want)
					}
					if i > 0 && ok {
						t.Errorf("request %d: span %d carries a priority too (%g)", k, i, p)
					}
					if v, ok := s.ddMetrics[tracemodel.AttrSamplingPriority]; ok {
						t.Errorf("request %d: span %d carries the %s tag (%g)", k, i, tracemodel.AttrSamplingPriority, v)
					}
				}
				again.Fill(payload, 0xabc, lo)
				if !bytes.Equal(again.Parts[0], req.Parts[0]) || again.Kept != req.Kept {
					t.Errorf("request %d: the same trace id gave different bytes", k)
				}
				if !bytes.Equal(payload.Parts[0], orig) {
					t.Fatal("Fill modified the pooled payload")
				}
			}
			if counts[PriorityUserKeep] == 0 || counts[PriorityUserReject] == 0 {
				t.Errorf("priorities %v: want both", counts)
			}
		})
	}
}

// TestDefaultPriorityUnchanged: without a keep fraction every ddtrace trace carries priority 1 on
// its first span, and every span the sampling.priority tag, as before the option existed.
func TestDefaultPriorityUnchanged(t *testing.T) {
	for _, protocol := range []string{DDTraceV04, DDTraceV05} {
		pool, err := NewPool(t.Context(), protocol, "checkout", 2, 10, 42)
		if err != nil {
			t.Fatal(err)
		}
		var req Request
		req.Fill(&pool.Payloads[1], 1, 2)
		if !req.Kept {
			t.Errorf("%s: a request without a keep fraction is not kept", protocol)
		}
		for i, s := range decode(t, protocol, req.Parts) {
			if p, ok := s.ddMetrics["_sampling_priority_v1"]; (i == 0) != ok || (ok && p != 1) {
				t.Errorf("%s: span %d priority %g (present %v)", protocol, i, p, ok)
			}
			if s.ddMetrics[tracemodel.AttrSamplingPriority] != 1 {
				t.Errorf("%s: span %d without the %s tag", protocol, i, tracemodel.AttrSamplingPriority)
			}
		}
	}
}

// TestKeepFractionRefused: the option is refused for the protocols without a sampling priority
// and outside (0, 1], by the pool and by Run, and 0 is accepted everywhere.
func TestKeepFractionRefused(t *testing.T) {
	for _, tt := range []struct {
		protocol string
		fraction float64
		wantErr  string
	}{
		{OTLPHTTP, 0.1, "only the ddtrace protocols"},
		{ZipkinJSON, 1, "only the ddtrace protocols"},
		{ElasticAPMIntake, 0.5, "only the ddtrace protocols"},
		{DDTraceV04, -0.1, "above 0 and at most 1"},
		{DDTraceV05, 1.5, "above 0 and at most 1"},
		{DDTraceV04, math.NaN(), "above 0 and at most 1"},
	} {
		if _, err := newPool(t.Context(), tt.protocol, "s", 1, 3, 1, tt.fraction); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s at %g: pool error %v, want %q", tt.protocol, tt.fraction, err, tt.wantErr)
		}
		_, err := Run(t.Context(), Config{Protocol: tt.protocol, Target: "127.0.0.1:1", Requests: 1, KeepFraction: tt.fraction})
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s at %g: Run error %v, want %q", tt.protocol, tt.fraction, err, tt.wantErr)
		}
	}
	for _, protocol := range Protocols() {
		if err := CheckKeepFraction(protocol, 0); err != nil {
			t.Errorf("%s without a keep fraction: %v", protocol, err)
		}
	}
}

// TestRunCountsKeptSpans sends a sampled load to a server that reads each request's priority and
// refuses one request in three: the result's kept spans are the priority-2 spans the server saw,
// and its kept acknowledged spans those of the requests it took.
func TestRunCountsKeptSpans(t *testing.T) {
	var n atomic.Int64
	var mu sync.Mutex
	var keptSeen, keptTaken, rejectedSeen int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		spans := decodeV05(t, body)
		take := n.Add(1)%3 != 0
		mu.Lock()
		switch spans[0].ddMetrics["_sampling_priority_v1"] {
		case PriorityUserKeep:
			keptSeen += len(spans)
			if take {
				keptTaken += len(spans)
			}
		case PriorityUserReject:
			rejectedSeen += len(spans)
		}
		mu.Unlock()
		if !take {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{
		Protocol: DDTraceV05, Target: strings.TrimPrefix(srv.URL, "http://"),
		Concurrency: 4, Requests: 60, Spans: 5, PoolSize: 3, Seed: 3, KeepFraction: 0.25,
	})
	if err != nil {
		t.Fatal(err)
	}
	if keptSeen+rejectedSeen != res.SpansSent || keptSeen == 0 || rejectedSeen == 0 {
		t.Fatalf("server saw %d kept and %d rejected spans of %d sent", keptSeen, rejectedSeen, res.SpansSent)
	}
	if res.SpansKept != keptSeen || res.SpansKeptAcked != keptTaken || res.KeepFraction != 0.25 {
		t.Errorf("result: kept %d, kept acknowledged %d, fraction %g; the server saw %d kept, took %d", res.SpansKept, res.SpansKeptAcked, res.KeepFraction, keptSeen, keptTaken)
	}
	if res.SpansKeptAcked >= res.SpansKept || res.SpansKeptAcked > res.SpansAcked {
		t.Errorf("kept acknowledged %d, kept %d, acknowledged %d", res.SpansKeptAcked, res.SpansKept, res.SpansAcked)
	}
}
