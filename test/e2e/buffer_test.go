package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// otlpLoad sends OTLP/HTTP protobuf requests of one signal (spans unless newSignalLoad says
// otherwise) and remembers which items were acknowledged with a 2xx: those are the items tracegate
// promised to deliver.
type otlpLoad struct {
	url string
	sig signal

	mu        sync.Mutex
	acked     map[string]bool // item id (a span's: hex) → acknowledged
	statuses  map[int]int
	transport int // transport errors
}

// signal is what an otlpLoad sends: how one request of n items is built, each item with an id of
// its own, and how that id is found again in the documents the stand-in stored.
type signal struct {
	unit        string // what an item is called in messages: "spans"
	path        string // OTLP/HTTP path
	indexPrefix string // where its documents go
	// request returns the protobuf body of one export request of n items and the items' ids.
	request func(n int) (body []byte, ids []string)
	// docID is the item id a document in an indexPrefix index carries.
	docID func(d esstandin.Document) string
}

var traceSignal = signal{
	unit: "spans", path: "/v1/traces", indexPrefix: "traces-", request: spanRequest,
	docID: func(d esstandin.Document) string { return d.SpanID },
}

func newOTLPLoad(endpoint string) *otlpLoad { return newSignalLoad(endpoint, traceSignal) }

func newSignalLoad(endpoint string, sig signal) *otlpLoad {
	return &otlpLoad{url: "http://" + endpoint + sig.path, sig: sig, acked: map[string]bool{}, statuses: map[int]int{}}
}

// spanRequest is one trace of n spans; the ids are the span ids (hex).
func spanRequest(n int) ([]byte, []string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "buffer-e2e")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	ids := make([]string, 0, n)
	var traceID pcommon.TraceID
	_, _ = rand.Read(traceID[:])
	now := time.Now()
	for i := range n {
		var spanID pcommon.SpanID
		_, _ = rand.Read(spanID[:])
		s := spans.AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(spanID)
		s.SetName("load")
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		s.Attributes().PutInt("i", int64(i))
		ids = append(ids, hex.EncodeToString(spanID[:]))
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		panic(err)
	}
	return body, ids
}

// send posts one request of n items and returns its status (0 on a transport error).
func (l *otlpLoad) send(ctx context.Context, n int) int {
	body, ids := l.sig.request(n)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.transport++
		return 0
	}
	resp.Body.Close()
	l.statuses[resp.StatusCode]++
	if resp.StatusCode/100 == 2 {
		for _, id := range ids {
			l.acked[id] = true
		}
	}
	return resp.StatusCode
}

// run sends from clients goroutines, each one request every interval, until ctx ends.
func (l *otlpLoad) run(ctx context.Context, clients, itemsPerRequest int, interval time.Duration) {
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					l.send(ctx, itemsPerRequest)
				}
			}
		})
	}
	wg.Wait()
}

// checkAllAckedArrived waits until every acknowledged item is in the stand-in and returns how
// many documents were duplicates. Clients may only have seen 2xx or a retryable 429/503.
func checkAllAckedArrived(t *testing.T, g *gateway, l *otlpLoad, timeout time.Duration) int {
	t.Helper()
	l.mu.Lock()
	acked := len(l.acked)
	statuses := l.statuses
	l.mu.Unlock()
	for status := range statuses {
		if status/100 != 2 && status != 429 && status != 503 {
			t.Errorf("clients saw status %d (%v): only 2xx, 429 and 503 are acceptable", status, statuses)
		}
	}
	if acked == 0 {
		t.Fatalf("nothing was acknowledged (statuses %v)", statuses)
	}
	seen := waitForAcked(t, g, l, timeout, timeout)
	missing, dups := 0, 0
	for id := range l.acked {
		if seen[id] == 0 {
			missing++
		}
	}
	for _, n := range seen {
		dups += n - 1
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged %s never reached Elasticsearch", missing, acked, l.sig.unit)
	}
	t.Logf("acknowledged %d %s, statuses %v, transport errors %d; arrived %d distinct, %d duplicates",
		acked, l.sig.unit, statuses, l.transport, len(seen), dups)
	return dups
}

// TestBufferRidesOutElasticsearchOutage is the buffer's outage test through the binary: with configs/default.yaml,
// Elasticsearch refuses connections for 30 s while clients keep sending; once it is back, every
// span tracegate acknowledged arrives.
func TestBufferRidesOutElasticsearchOutage(t *testing.T) {
	g := startGateway(t, "default.yaml")
	if err := g.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	load := newOTLPLoad(g.endpoints.OTLPHTTP)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	load.run(ctx, 4, 100, 50*time.Millisecond) // ~8,000 spans/s offered
	cancel()
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	checkAllAckedArrived(t, g, load, 2*time.Minute)
}

// TestDurableSurvivesSIGKILL: with configs/durable.yaml (write_ahead), spans acknowledged while
// Elasticsearch is down survive a SIGKILL of tracegate and arrive after the restart, each once
// (what is replayed twice has the same _id, which Elasticsearch refuses).
func TestDurableSurvivesSIGKILL(t *testing.T) {
	g := startGateway(t, "durable.yaml")
	if err := g.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	load := newOTLPLoad(g.endpoints.OTLPHTTP)
	for i := range 50 {
		if status := load.send(context.Background(), 100); status != http.StatusOK {
			t.Fatalf("request %d: status %d", i, status)
		}
	}
	if err := g.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	g.start(t)
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	if dups := checkAllAckedArrived(t, g, load, 2*time.Minute); dups != 0 {
		t.Errorf("%d duplicate span documents after the replay", dups)
	}
}

// itemCounts counts the documents of sig's indices in the stand-in by the item id they carry.
func itemCounts(g *gateway, sig signal) map[string]int {
	seen := map[string]int{}
	for _, d := range g.es.Documents() {
		// Documents without an item id are not the load's (e.g. a span's exception event, stored
		// as a log record).
		if id := sig.docID(d); id != "" && strings.HasPrefix(d.Index, sig.indexPrefix) {
			seen[id]++
		}
	}
	return seen
}

// waitForAcked waits until every item id the load saw acknowledged is in the stand-in, or until
// nothing new arrived for stall, or timeout; it returns the
// item ids seen with their document counts. It compares distinct ids, not document counts:
// duplicates (a bulk stored whose reply was lost, then sent again) would otherwise end the wait
// while acknowledged records are still on their way.
func waitForAcked(t *testing.T, g *gateway, l *otlpLoad, timeout, stall time.Duration) map[string]int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last, lastChange := -1, time.Now()
	for {
		seen := itemCounts(g, l.sig)
		l.mu.Lock()
		missing := 0
		for id := range l.acked {
			if seen[id] == 0 {
				missing++
			}
		}
		l.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			return seen
		}
		if len(seen) != last {
			last, lastChange = len(seen), time.Now()
		} else if time.Since(lastChange) > stall {
			return seen
		}
		time.Sleep(500 * time.Millisecond) // polling what the process has delivered so far
	}
}
