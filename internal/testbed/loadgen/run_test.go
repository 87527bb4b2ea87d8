package loadgen

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestWithDefaults: unset fields get their defaults, set ones are kept, and a run with neither
// requests nor a duration is refused.
func TestWithDefaults(t *testing.T) {
	got, err := withDefaults(Config{Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Concurrency != 1 || got.Spans != 1 || got.PoolSize != 64 || got.Timeout != 30*time.Second || got.Service != "tracegen" || got.Seed == 0 {
		t.Errorf("defaults: %+v", got)
	}
	set := Config{Concurrency: 3, Spans: 7, Duration: time.Second, PoolSize: 5, Timeout: time.Second, Service: "s", Seed: 9}
	if got, err := withDefaults(set); err != nil || !reflect.DeepEqual(got, set) {
		t.Errorf("a config with every field set became %+v (error %v)", got, err)
	}
	if _, err := withDefaults(Config{Concurrency: 2}); err == nil {
		t.Error("a run with neither requests nor a duration was accepted")
	}
}

// TestNextStopsAfterTheRequests: without a duration the workers together take Concurrency x
// Requests request numbers, each once, then none.
func TestNextStopsAfterTheRequests(t *testing.T) {
	l := newLoad(Config{Concurrency: 2, Requests: 3}, nil, nil)
	for want := range int64(6) {
		k, _, ok := l.next(context.Background())
		if !ok || k != want {
			t.Fatalf("request %d: got %d, %v", want, k, ok)
		}
	}
	if k, _, ok := l.next(context.Background()); ok {
		t.Errorf("a seventh request (%d) was handed out", k)
	}
}

// TestNextPacesAFixedRate: at a fixed rate a request's latency counts from when it falls due, and
// next does not hand it out earlier; past the duration it hands out none.
func TestNextPacesAFixedRate(t *testing.T) {
	l := newLoad(Config{Concurrency: 1, Rate: 10, Duration: 290 * time.Millisecond}, nil, nil)
	for k := range int64(3) {
		got, due, ok := l.next(context.Background())
		if !ok || got != k {
			t.Fatalf("request %d: got %d, %v", k, got, ok)
		}
		if want := time.Duration(k) * 100 * time.Millisecond; !near(due.Sub(l.start), want) {
			t.Errorf("request %d due at +%v, want +%v", k, due.Sub(l.start), want)
		}
		if time.Now().Before(due) {
			t.Errorf("request %d handed out before it was due", k)
		}
	}
	if _, _, ok := l.next(context.Background()); ok {
		t.Error("a request due at +300ms was handed out in a 290ms run")
	}
}

// near compares due times, which come from float arithmetic: a nanosecond either way is the same
// time.
func near(a, b time.Duration) bool { return a-b >= -1 && a-b <= 1 }

// TestNextStopsOnCancel: a worker waiting for its request's time stops when the run is cancelled.
func TestNextStopsOnCancel(t *testing.T) {
	l := newLoad(Config{Concurrency: 1, Rate: 0.001, Duration: time.Hour}, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	if _, _, ok := l.next(ctx); !ok {
		t.Fatal("the first request, due at once, was not handed out")
	}
	cancel()
	if _, _, ok := l.next(ctx); ok {
		t.Error("a request was handed out after the cancellation")
	}
}

// TestMissed: the requests due before the deadline beyond those sent are missed, each waiting
// from when it was due until the end; a closed loop or a run without a duration misses none.
func TestMissed(t *testing.T) {
	l := newLoad(Config{Rate: 10, Duration: time.Second}, nil, nil)
	end := l.start.Add(1500 * time.Millisecond)
	got := l.missed(7, end)
	want := []Timed{
		{Due: 700 * time.Millisecond, Took: 800 * time.Millisecond},
		{Due: 800 * time.Millisecond, Took: 700 * time.Millisecond},
		{Due: 900 * time.Millisecond, Took: 600 * time.Millisecond},
	}
	if len(got) != len(want) {
		t.Fatalf("missed %v, want %v", got, want)
	}
	for i := range want {
		if !near(got[i].Due, want[i].Due) || got[i].Took+got[i].Due != end.Sub(l.start) {
			t.Errorf("missed[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := l.missed(10, end); len(got) != 0 {
		t.Errorf("every due request sent, yet missed %v", got)
	}
	for _, c := range []Config{{Duration: time.Second}, {Rate: 10, Requests: 5}} {
		if got := newLoad(c, nil, nil).missed(0, end); got != nil {
			t.Errorf("%+v: missed %v, want none", c, got)
		}
	}
}

// TestRecord: each outcome class is counted where it belongs, the spans and bytes of every
// request are counted, acknowledged and kept ones besides, and only the first three errors are
// kept.
func TestRecord(t *testing.T) {
	w := workerStats{status: StatusCounts{Codes: map[string]int{}}}
	kept := &Request{Parts: [][]byte{make([]byte, 10), make([]byte, 5)}, Spans: 4, Kept: true}
	rejected := &Request{Parts: [][]byte{make([]byte, 7)}, Spans: 2}
	w.record(kept, "200", classOK, nil, Timed{Took: 3})
	w.record(rejected, "200", classOK, nil, Timed{Took: 5})
	w.record(kept, "429", classTooMany, nil, Timed{Took: 1})
	w.record(kept, "503", classServer, errors.New("e1"), Timed{Took: 1})
	w.record(kept, "400", classOther, errors.New("e2"), Timed{Took: 1})
	w.record(kept, "", classTransport, errors.New("e3"), Timed{Took: 1})
	w.record(kept, "", 99, errors.New("e4"), Timed{Took: 1})

	want := StatusCounts{OK: 2, TooMany: 1, Server: 1, Other: 1, Transport: 2, Codes: map[string]int{"200": 2, "429": 1, "503": 1, "400": 1, "transport": 2}}
	if !reflect.DeepEqual(w.status, want) {
		t.Errorf("status %+v, want %+v", w.status, want)
	}
	if w.spans != 6*4+2 || w.kept != 6*4 || w.acked != 6 || w.keptOK != 4 || w.bytes != 6*15+7 {
		t.Errorf("spans %d kept %d acked %d kept-acked %d bytes %d", w.spans, w.kept, w.acked, w.keptOK, w.bytes)
	}
	if len(w.timed) != 7 || !reflect.DeepEqual(w.ok, []time.Duration{3, 5}) {
		t.Errorf("%d latencies, 2xx %v; want 7, [3 5]", len(w.timed), w.ok)
	}
	if !reflect.DeepEqual(w.errs, []string{"e1", "e2", "e3"}) {
		t.Errorf("errors %v, want the first three", w.errs)
	}
}

// TestAddWorkers: the workers' counts add up, and the Result keeps the first five distinct
// errors in the workers' order.
func TestAddWorkers(t *testing.T) {
	worker := func(n int, errs ...string) workerStats {
		return workerStats{
			ok: []time.Duration{time.Duration(n)}, bytes: int64(n), spans: 2 * n, acked: n, kept: n, keptOK: n, errs: errs,
			status: StatusCounts{OK: n, Server: 1, Codes: map[string]int{"200": n, "503": 1}},
		}
	}
	var r Result
	ok := r.addWorkers([]workerStats{worker(1, "a", "b", "a"), worker(2, "b", "c", "d"), worker(3, "e", "f")})
	if !reflect.DeepEqual(ok, []time.Duration{1, 2, 3}) {
		t.Errorf("2xx latencies %v", ok)
	}
	if r.Bytes != 6 || r.SpansSent != 12 || r.SpansAcked != 6 || r.SpansKept != 6 || r.SpansKeptAcked != 6 {
		t.Errorf("counts %+v", r)
	}
	if want := (StatusCounts{OK: 6, Server: 3, Codes: map[string]int{"200": 6, "503": 3}}); !reflect.DeepEqual(r.Status, want) {
		t.Errorf("status %+v, want %+v", r.Status, want)
	}
	if got := fmt.Sprint(r.Errors); got != "[a b c d e]" {
		t.Errorf("errors %s, want [a b c d e]", got)
	}
}
