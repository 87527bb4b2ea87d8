package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// TestOfferedRate: a variant's rate_of rate (or why it has none) comes first, then a fraction of
// stock's saturation rate, then -rate.
func TestOfferedRate(t *testing.T) {
	sat := &report{Spans: 10, Runs: []run{{Collector: "stock", Mode: "nobuffer", Protocol: "otlp-http", E2ESpansPerSec: 20000}}}
	noRate := errors.New("no closed-loop run")
	tests := []struct {
		name    string
		o       options
		j       job
		want    float64
		wantErr error
	}{
		{"closed loop", options{}, job{protocol: "otlp-http"}, 0, nil},
		{"-rate", options{rate: 300}, job{protocol: "otlp-http"}, 300, nil},
		{"-rate-fraction", options{rate: 300, rateFraction: 0.5, saturation: sat}, job{protocol: "otlp-http"}, 1000, nil},
		{"rate_of", options{rate: 300, rateFraction: 0.5, saturation: sat}, job{protocol: "otlp-http", rate: 42}, 42, nil},
		{"rate_of without a run", options{rate: 300}, job{protocol: "otlp-http", rate: 42, rateErr: noRate}, 0, noRate},
	}
	for _, tt := range tests {
		got, err := offeredRate(tt.o, tt.j)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: %v, %v; want %v, %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := offeredRate(options{rateFraction: 0.5, saturation: sat}, job{protocol: "zipkin-json"}); err == nil {
		t.Error("-rate-fraction without a saturation run of the protocol gave a rate")
	}
}

// TestShortfall: the error of a run that gave up waiting says which spans it waited for and where.
func TestShortfall(t *testing.T) {
	tests := []struct {
		r    run
		want string
	}{
		{run{ExpectedSpans: 100}, "7 of 100 acknowledged spans reached the stand-in " + gaveUp},
		{run{ExpectedSpans: 100, KeepFraction: 0.1}, "7 of 100 kept spans reached the stand-in " + gaveUp},
		{run{ExpectedSpans: 100, KeepFraction: 0.1, Expect: expectAll}, "7 of 100 acknowledged spans reached the stand-in " + gaveUp},
		{run{ExpectedSpans: 100, Sink: sinkKafka}, "7 of 100 acknowledged spans reached Kafka " + gaveUp},
	}
	for _, tt := range tests {
		if got := tt.r.shortfall(7); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.r, got, tt.want)
		}
	}
}

// TestSetRates: over a 4 s window (a 2 s load, then a 2 s drain) the rates and CPU shares are
// over the window or the load as each field says, in clock ticks of 1/clkTck s.
func TestSetRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := window{
		start: t0, loadEnd: t0.Add(2 * time.Second), end: t0.Add(4 * time.Second),
		atStart:   cpuSample{collector: 1000, self: 500, peer: 10},
		atLoadEnd: cpuSample{collector: 1100, self: 550},
		atEnd:     cpuSample{collector: 1300, self: 580, peer: 210},
		genCPU:    time.Second,
	}
	r := run{SpansInES: 4000, Gen: loadgen.Result{SpansAcked: 5000}}
	r.setRates(w)
	want := map[string][2]float64{
		"LastSpanSeconds":         {r.LastSpanSeconds, 4},
		"CPUPercent":              {r.CPUPercent, 75},        // 3 s of CPU in 4 s
		"StandinCPUPercent":       {r.StandinCPUPercent, 20}, // 0.8 s
		"GenCPUPercent":           {r.GenCPUPercent, 25},
		"PeerCPUPercent":          {r.PeerCPUPercent, 50},
		"E2ESpansPerSec":          {r.E2ESpansPerSec, 1000},
		"SpansPerCoreSec":         {r.SpansPerCoreSec, 1000 / 0.75},
		"AcceptedSpansPerCoreSec": {r.AcceptedSpansPerCoreSec, 5000 / 3.0},
		"LoadSeconds":             {r.LoadSeconds, 2},
		"DrainSeconds":            {r.DrainSeconds, 2},
		"AcceptedSpansPerSec":     {r.AcceptedSpansPerSec, 2500},
		"LoadCPUPercent":          {r.LoadCPUPercent, 50}, // 1 s of CPU in the 2 s load
		"ClientLoadCPUPercent":    {r.ClientLoadCPUPercent, 75},
	}
	for name, v := range want {
		if math.Abs(v[0]-v[1]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, v[0], v[1])
		}
	}

	// The collector's CPU unread at the load's end, the gateway's unread at the end: those
	// shares are left out, not made up.
	w.atLoadEnd.collectorErr, w.atEnd.peerErr = errors.New("gone"), errors.New("gone")
	r = run{SpansInES: 4000}
	r.setRates(w)
	if r.LoadCPUPercent != 0 || r.PeerCPUPercent != 0 || r.CPUPercent != 75 {
		t.Errorf("load CPU %v, peer CPU %v, CPU %v; want 0, 0, 75", r.LoadCPUPercent, r.PeerCPUPercent, r.CPUPercent)
	}

	// A wait that gave up before the load ended (the last span came during it): no negative
	// drain. An empty window divides nothing.
	r = run{}
	r.setRates(window{start: t0, loadEnd: t0.Add(time.Second), end: t0})
	if r.DrainSeconds != 0 || r.LastSpanSeconds != 0 || r.CPUPercent != 0 || r.E2ESpansPerSec != 0 {
		t.Errorf("empty window: %+v", r)
	}
}

// TestSetArrivals: the spans are the sink's; the mean document size is over the stand-in's span
// documents.
func TestSetArrivals(t *testing.T) {
	var r run
	r.setArrivals(esstandin.Stats{SpansByService: map[string]int{"a": 30, "b": 10}, SpanSourceBytes: 20000, DuplicateSpans: 2, BulkRequests: 5}, 90)
	if r.SpansInES != 90 || r.SpanDocBytes != 500 || r.DuplicateSpans != 2 || r.BulkRequests != 5 {
		t.Errorf("%+v", r)
	}
	r = run{}
	r.setArrivals(esstandin.Stats{}, 12)
	if r.SpansInES != 12 || r.SpanDocBytes != 0 {
		t.Errorf("no span documents: %+v", r)
	}
}

// TestSetDelivery: the spans' arrivals are timed against the acknowledgement log; a log that
// cannot be read is the run's error unless it has one.
func TestSetDelivery(t *testing.T) {
	id := loadgen.TraceID{Hi: 1, Lo: 2}
	acked := time.Now()
	path := filepath.Join(t.TempDir(), "acks")
	if err := os.WriteFile(path, loadgen.AppendAck(nil, id, acked), 0o600); err != nil {
		t.Fatal(err)
	}
	var a arrivals
	a.record("00000000000000010000000000000002")
	a.record("not an id")
	var r run
	r.setDelivery(path, &a)
	if r.Error != "" || r.Delivery == nil || r.Delivery.Latency.Count != 1 || r.Delivery.Unmatched != 1 {
		t.Fatalf("delivery %+v, error %q: want one span timed, one unmatched", r.Delivery, r.Error)
	}

	r = run{}
	r.setDelivery(filepath.Join(t.TempDir(), "none"), &a)
	if r.Delivery != nil || r.Error == "" {
		t.Errorf("a missing log: delivery %+v, error %q", r.Delivery, r.Error)
	}
	r = run{Error: "first"}
	r.setDelivery(filepath.Join(t.TempDir(), "none"), &a)
	if r.Error != "first" {
		t.Errorf("the run's own error became %q", r.Error)
	}
}
