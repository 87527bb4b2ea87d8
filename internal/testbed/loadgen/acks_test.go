package loadgen

import (
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TestOnAck: OnAck gets the trace id of every acknowledged request, as it went on the wire, at
// the time of its answer, and of no refused one.
func TestOnAck(t *testing.T) {
	var mu sync.Mutex
	taken := map[TraceID]time.Time{}
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tid := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
		mu.Lock()
		defer mu.Unlock()
		n++
		if n%3 == 0 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		taken[TraceID{binary.BigEndian.Uint64(tid[:8]), binary.BigEndian.Uint64(tid[8:])}] = time.Now()
	}))
	defer srv.Close()
	acks := map[TraceID]time.Time{}
	var acksMu sync.Mutex
	res, err := Run(context.Background(), Config{
		Protocol: OTLPHTTP, Target: strings.TrimPrefix(srv.URL, "http://"), Concurrency: 3, Requests: 10, Spans: 2, Seed: 5,
		OnAck: func(id TraceID, at time.Time) {
			acksMu.Lock()
			acks[id] = at
			acksMu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status.OK != 20 || len(acks) != 20 || len(taken) != 20 {
		t.Fatalf("%d acknowledged, %d acks, %d taken by the server; want 20 of each", res.Status.OK, len(acks), len(taken))
	}
	for id, at := range taken {
		ack, ok := acks[id]
		if !ok {
			t.Errorf("trace %+v was taken but not reported", id)
			continue
		}
		if ack.Before(at) {
			t.Errorf("trace %+v: acknowledged at %v, before the server took it at %v", id, ack, at)
		}
	}
}

// TestAckLog: an acknowledgement log reads back what was appended, the trace ids as span
// documents carry them; a malformed line is refused with its number.
func TestAckLog(t *testing.T) {
	at := time.Unix(1764990000, 123456789)
	ids := []TraceID{{0x8000000000000001, 0xbfffffffffffffff}, {1, 2}}
	var b []byte
	for i, id := range ids {
		b = AppendAck(b, id, at.Add(time.Duration(i)*time.Millisecond))
	}
	got, err := ReadAcks(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[ids[0]] != at.UnixNano() || got[ids[1]] != at.UnixNano()+1e6 {
		t.Errorf("read back %v from %q", got, b)
	}
	if id, ok := ParseTraceID("8000000000000001bfffffffffffffff"); !ok || id != ids[0] {
		t.Errorf("ParseTraceID = %v, %v", id, ok)
	}
	for _, bad := range []string{"", "8000000000000001", "x000000000000001bfffffffffffffff"} {
		if _, ok := ParseTraceID(bad); ok {
			t.Errorf("ParseTraceID(%q) accepted", bad)
		}
	}
	if _, err := ReadAcks(strings.NewReader(string(b) + "00000000000000010000000000000002 soon\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("malformed line: %v", err)
	}
}
