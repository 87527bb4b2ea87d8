package e2e

// The buffer carries OTLP logs and metrics as it carries spans: the logs and metrics pipelines of
// configs/default.yaml and configs/durable.yaml run memory_limiter → elasticmapping → buffer →
// elasticsearch, so an Elasticsearch outage and a SIGKILL lose no acknowledged log record or data
// point. The trace versions of these tests are in buffer_test.go; they share its otlpLoad.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// testIDKey is the attribute that makes every log record and data point the tests send an item
// of its own: the tests count distinct values of it among the stored documents.
const testIDKey = "test.id"

var (
	logSignal = signal{
		unit: "log records", path: "/v1/logs", indexPrefix: "logs-", request: logRequest, docID: testIDOf,
	}
	metricSignal = signal{
		unit: "metric data points", path: "/v1/metrics", indexPrefix: "metrics-", request: metricRequest, docID: testIDOf,
	}
)

// newTestID is a random test.id value.
func newTestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// logRequest is one request of n log records, each with a test.id of its own and a timestamp
// (elasticmapping's document_ids derives a log record's _id from the record, timestamp included,
// so a replayed copy is refused with 409 instead of stored twice).
func logRequest(n int) ([]byte, []string) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "buffer-e2e")
	records := rl.ScopeLogs().AppendEmpty().LogRecords()
	ids := make([]string, 0, n)
	now := pcommon.NewTimestampFromTime(time.Now())
	for i := range n {
		id := newTestID()
		r := records.AppendEmpty()
		r.SetTimestamp(now)
		r.SetObservedTimestamp(now)
		r.SetSeverityNumber(plog.SeverityNumberInfo)
		r.SetSeverityText("INFO")
		r.Body().SetStr(fmt.Sprintf("load %d", i))
		r.Attributes().PutStr(testIDKey, id)
		ids = append(ids, id)
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		panic(err)
	}
	return body, ids
}

// metricRequest is one request of n gauges of one data point each, every data point with a
// test.id of its own. The exporter's otel mode groups the data points that share resource, scope,
// attributes and timestamp into one document, and a time-series data stream refuses a second
// document with the same dimensions and timestamp: the unique attribute makes every data point
// a document of its own (a metric document's @timestamp has millisecond resolution, so distinct
// nanosecond timestamps would not).
func metricRequest(n int) ([]byte, []string) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "buffer-e2e")
	metrics := rm.ScopeMetrics().AppendEmpty().Metrics()
	ids := make([]string, 0, n)
	now := pcommon.NewTimestampFromTime(time.Now())
	for i := range n {
		id := newTestID()
		m := metrics.AppendEmpty()
		m.SetName("buffer_e2e.load")
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(now)
		dp.SetIntValue(int64(i))
		dp.Attributes().PutStr(testIDKey, id)
		ids = append(ids, id)
	}
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		panic(err)
	}
	return body, ids
}

// testIDOf is the test.id of an otel-mode log or metric document, "" when it has none. The
// exporter keeps attribute keys as sent, dots included, under "attributes":
// {"attributes":{"test.id":"…"},"resource":{…},…}; a nested {"test":{"id":"…"}} is read too.
func testIDOf(d esstandin.Document) string {
	var doc struct {
		Attributes map[string]json.RawMessage `json:"attributes"`
	}
	if json.Unmarshal(d.Source, &doc) != nil {
		return ""
	}
	var id string
	if raw, ok := doc.Attributes[testIDKey]; ok && json.Unmarshal(raw, &id) == nil {
		return id
	}
	var nested struct {
		ID string `json:"id"`
	}
	if raw, ok := doc.Attributes["test"]; ok && json.Unmarshal(raw, &nested) == nil {
		return nested.ID
	}
	return ""
}

// signalName is a load's subtest name: "logs" or "metrics".
func signalName(l *otlpLoad) string { return l.sig.path[len("/v1/"):] }

// TestLogsAndMetricsRideOutOutage: with configs/default.yaml, Elasticsearch refuses connections
// for 15 s while clients send OTLP logs and metrics; once it is back, every log record and data
// point tracegate acknowledged arrives (clients may only have seen 2xx, 429 and 503).
func TestLogsAndMetricsRideOutOutage(t *testing.T) {
	g := startGateway(t, "default.yaml")
	if err := g.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	loads := []*otlpLoad{newSignalLoad(g.endpoints.OTLPHTTP, logSignal), newSignalLoad(g.endpoints.OTLPHTTP, metricSignal)}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	var wg sync.WaitGroup
	for _, l := range loads {
		wg.Go(func() { l.run(ctx, 2, 50, 100*time.Millisecond) }) // ~1,000 items/s offered per signal
	}
	wg.Wait()
	cancel()
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	// One subtest per signal, so both are checked and reported when one fails.
	for _, l := range loads {
		t.Run(signalName(l), func(t *testing.T) {
			checkAllAckedArrived(t, g, l, 2*time.Minute)
		})
	}
}

// TestLogsAndMetricsDurableSurviveSIGKILL: with configs/durable.yaml (write_ahead), log records and
// data points acknowledged while Elasticsearch is down survive a SIGKILL of tracegate and arrive
// after the restart, each once: a replayed log record has the same _id, a replayed data point the
// same dimensions and timestamp, and Elasticsearch refuses both.
func TestLogsAndMetricsDurableSurviveSIGKILL(t *testing.T) {
	g := startGateway(t, "durable.yaml")
	if err := g.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	loads := []*otlpLoad{newSignalLoad(g.endpoints.OTLPHTTP, logSignal), newSignalLoad(g.endpoints.OTLPHTTP, metricSignal)}
	const requests, perRequest = 50, 100
	for i := range requests {
		for _, l := range loads { // interleaved: both signals in the buffer at once
			if status := l.send(context.Background(), perRequest); status != http.StatusOK {
				t.Fatalf("%s request %d of %d, Elasticsearch down: status %d, want 200 (write_ahead acknowledges once the batch is on disk)",
					l.sig.path, i+1, requests, status)
			}
		}
	}
	if err := g.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	g.start(t)
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	for _, l := range loads {
		t.Run(signalName(l), func(t *testing.T) {
			if dups := checkAllAckedArrived(t, g, l, 2*time.Minute); dups != 0 {
				t.Errorf("%d duplicate %s documents after the replay", dups, l.sig.unit)
			}
		})
	}
}
