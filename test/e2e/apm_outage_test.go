package e2e

// The Kibana APM overlay (configs/default.yaml + configs/elasticsearch/apm.yaml) with
// Elasticsearch down for 30 s under a steady OTLP load of several services:
//
//   - every span tracegate acknowledged reaches traces-*.otel-* exactly once;
//   - the connector's 1m window that ends during the outage is exported into the buffer while
//     Elasticsearch is down, and the buffer delivers its documents once Elasticsearch is back;
//   - the service summary over the run's 1m windows counts, per service, each span accepted plus
//     each span of an attempt the buffer refused (429: the connector counted it before the buffer
//     answered, apm_refused_test.go), and the transactions likewise;
//   - an aggregated document of the outage's window sent again is refused with 409 (a time-series
//     data stream), so a replayed metric delivery cannot store a second one.
//
// Wall time (measured 47 - 80 s, 89 s with -race; at most about 110 s): the load starts so that a
// minute boundary falls inside the outage, after an idle wait of up to 43 s; the backlog arrives
// 3.7 - 5.5 s after the recovery (the buffer notices it at its next probe, at most
// retry.max_interval, 5 s, +20 % after the last; with 30 s it was 6 - 18 s). The window after the boundary would only end at the next
// minute; instead of waiting up to a minute for it, the test stops tracegate cleanly, which
// exports the open windows into the buffer, and starts it again, which delivers them (as
// TestAPMOverlay checks on its own).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

const (
	apmOutageServices = 4
	// Each service's client sends one trace of apmOutageSpans spans every apmOutageInterval:
	// 1,000 spans/s in all, with the enrichment and the aggregation on two shared cores.
	apmOutageSpans    = 25
	apmOutageInterval = 100 * time.Millisecond
	// The load: apmOutageBefore, then Elasticsearch down for apmOutageLength, then apmOutageAfter.
	apmOutageBefore = 7500 * time.Millisecond
	apmOutageLength = 30 * time.Second
	apmOutageAfter  = 7500 * time.Millisecond
	// A minute boundary must fall at least this far inside the outage on both sides: the window
	// ending there is exported at the boundary while Elasticsearch is down, and the exporter's own
	// retries (about 3 s, then the bulk fails back to the buffer; measured: the first failure
	// 5.5 s after the boundary) end before it is back, so the buffer holds the window's points.
	apmOutageMarginStart = 3 * time.Second
	apmOutageMarginEnd   = 10 * time.Second
	// apmOutageResend is how long after the load a client still resends a refused request.
	apmOutageResend = 30 * time.Second
)

// apmOutageLoad is one client per service, each resending a refused request (429, 503, transport
// error) with the same spans until it is accepted, as OTLP exporters do. It counts every attempt.
type apmOutageLoad struct {
	url    string
	client *http.Client

	mu        sync.Mutex
	acked     map[string]string // span id (hex) → service, of accepted requests
	statuses  map[int]int       // per attempt
	transport int               // attempts without an answer
	given     int               // requests given up (a status that is not retryable, or no time left)
	perSvc    map[string]*apmOutageCounts
}

// apmOutageCounts are one service's attempts.
type apmOutageCounts struct {
	requests     int // distinct requests
	accepted     int // requests answered 2xx
	refused429   int // attempts the buffer refused (after the connector had counted them)
	refused503   int // attempts refused with 503 (memory_limiter, before the connector)
	acceptedSpan int
}

func newAPMOutageLoad(endpoint string, services []string) *apmOutageLoad {
	l := &apmOutageLoad{
		url:      "http://" + endpoint + "/v1/traces",
		client:   &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * len(services)}},
		acked:    map[string]string{},
		statuses: map[int]int{},
		perSvc:   map[string]*apmOutageCounts{},
	}
	for _, s := range services {
		l.perSvc[s] = &apmOutageCounts{}
	}
	return l
}

// apmOutageRequest is one trace of n spans of service: an HTTP server transaction whose children
// call another service over HTTP, query PostgreSQL and do internal work, so that every one of the
// four aggregated metric sets gets documents. Span ids are random: distinct arrivals are counted
// by them.
func apmOutageRequest(service string, n int) ([]byte, []string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", service)
	res.PutStr("service.version", "1.0.0")
	res.PutStr("deployment.environment.name", "e2e")
	res.PutStr("telemetry.sdk.name", "opentelemetry")
	res.PutStr("telemetry.sdk.language", "go")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	var traceID pcommon.TraceID
	_, _ = rand.Read(traceID[:])
	end := time.Now()
	start := end.Add(-20 * time.Millisecond)
	ids := make([]string, 0, n)
	var rootID pcommon.SpanID
	for i := range n {
		var id pcommon.SpanID
		_, _ = rand.Read(id[:])
		s := spans.AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(id)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		a := s.Attributes()
		switch {
		case i == 0:
			rootID = id
			s.SetName("GET /orders/{id}")
			s.SetKind(ptrace.SpanKindServer)
			a.PutStr("http.request.method", "GET")
			a.PutStr("http.route", "/orders/{id}")
			a.PutInt("http.response.status_code", 200)
			a.PutStr("url.scheme", "http")
			a.PutStr("url.path", "/orders/42")
		case i%3 == 1:
			s.SetName("GET")
			s.SetKind(ptrace.SpanKindClient)
			a.PutStr("http.request.method", "GET")
			a.PutStr("url.full", "http://"+apmDestination+"/items/42")
			a.PutStr("server.address", "inventory.internal")
			a.PutInt("server.port", 8081)
			a.PutInt("http.response.status_code", 200)
		case i%3 == 2:
			s.SetName("SELECT orders")
			s.SetKind(ptrace.SpanKindClient)
			a.PutStr("db.system", "postgresql")
			a.PutStr("db.name", "shop")
			a.PutStr("db.statement", "SELECT id, total FROM orders WHERE id = $1")
		default:
			s.SetName("render order")
			s.SetKind(ptrace.SpanKindInternal)
		}
		if i > 0 {
			s.SetParentSpanID(rootID)
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(end.Add(-time.Millisecond)))
		}
		ids = append(ids, hex.EncodeToString(id[:]))
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		panic(err)
	}
	return body, ids
}

// post sends one attempt and returns its status, 0 when there was no answer.
func (l *apmOutageLoad) post(ctx context.Context, body []byte) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := l.client.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// sendAs sends, as service, one request every interval until load ends; a refused request is resent every
// 250 ms until it is accepted or resend ends.
func (l *apmOutageLoad) sendAs(load, resend context.Context, service string) {
	tick := time.NewTicker(apmOutageInterval)
	defer tick.Stop()
	c := l.perSvc[service]
	for {
		select {
		case <-load.Done():
			return
		case <-tick.C:
		}
		body, ids := apmOutageRequest(service, apmOutageSpans)
		l.mu.Lock()
		c.requests++
		l.mu.Unlock()
		for {
			status := l.post(resend, body)
			l.mu.Lock()
			if status == 0 {
				l.transport++
			} else {
				l.statuses[status]++
			}
			switch status {
			case http.StatusOK:
				c.accepted++
				c.acceptedSpan += len(ids)
				for _, id := range ids {
					l.acked[id] = service
				}
			case http.StatusTooManyRequests:
				c.refused429++
			case http.StatusServiceUnavailable:
				c.refused503++
			}
			retry := status == 0 || status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
			if retry && resend.Err() != nil || !retry && status != http.StatusOK {
				l.given++
			}
			l.mu.Unlock()
			if !retry || resend.Err() != nil {
				break
			}
			select {
			case <-resend.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// apmMetricDoc is an aggregated metric document and its _id.
type apmMetricDoc struct {
	apmDoc
	id string
}

// apmOutageMetrics returns the 1m aggregated documents of the services.
func apmOutageMetrics(t *testing.T, g *gateway, services map[string]bool) []apmMetricDoc {
	t.Helper()
	var out []apmMetricDoc
	for _, d := range g.es.Documents() {
		if !strings.HasPrefix(d.Index, "metrics-") || !strings.HasSuffix(d.Index, ".1m.otel-default") {
			continue
		}
		var m apmMetricDoc
		if err := json.Unmarshal(d.Source, &m.apmDoc); err != nil {
			t.Fatalf("document %s in %s: %v", d.ID, d.Index, err)
		}
		if !services[fmt.Sprint(m.Resource.Attributes["service.name"])] {
			continue
		}
		m.index, m.raw, m.id = d.Index, d.Source, d.ID
		out = append(out, m)
	}
	return out
}

// metricValue is a metric's number: a plain value, or field (sum, value_count) of a summary.
func metricValue(d apmDoc, name, field string) float64 {
	switch v := d.Metrics[name].(type) {
	case float64:
		return v
	case map[string]any:
		f, _ := v[field].(float64)
		return f
	}
	return 0
}

// spanArrivals counts the span documents in traces-*.otel-* by span id.
func spanArrivals(g *gateway) map[string]int {
	seen := map[string]int{}
	for _, d := range g.es.Documents() {
		if strings.HasPrefix(d.Index, "traces-") && strings.Contains(d.Index, ".otel-") {
			seen[d.SpanID]++
		}
	}
	return seen
}

func TestAPMOutageUnderLoad(t *testing.T) {
	// Mostly waiting for a minute's edge: run beside the other APM tests.
	t.Parallel()
	started := time.Now()
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm.yaml"}, esVersion: "9.2.0"})
	ctx := t.Context()
	id := newTestID()[:8]
	var services []string
	ours := map[string]bool{}
	for i := range apmOutageServices {
		s := fmt.Sprintf("apm-outage-%s-%d", id, i)
		services = append(services, s)
		ours[s] = true
	}

	// Schedule: a minute boundary inside the outage, at least the margins from its edges; the load
	// starts apmOutageBefore before the outage, now or after an idle wait.
	now := time.Now()
	boundary := now.Truncate(time.Minute).Add(time.Minute)
	if boundary.Sub(now) < apmOutageBefore+apmOutageMarginStart {
		boundary = boundary.Add(time.Minute)
	}
	loadStart := boundary.Add(-apmOutageBefore - apmOutageLength + apmOutageMarginEnd)
	if loadStart.Before(now) {
		loadStart = now
	}
	idle := time.Until(loadStart)
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(idle):
	}

	load := newAPMOutageLoad(g.endpoints.OTLPHTTP, services)
	loadCtx, cancelLoad := context.WithTimeout(ctx, apmOutageBefore+apmOutageLength+apmOutageAfter)
	defer cancelLoad()
	resendCtx, cancelResend := context.WithTimeout(ctx, apmOutageBefore+apmOutageLength+apmOutageAfter+apmOutageResend)
	defer cancelResend()
	loadBegan := time.Now()
	var wg sync.WaitGroup
	for _, s := range services {
		wg.Go(func() { load.sendAs(loadCtx, resendCtx, s) })
	}
	time.Sleep(time.Until(loadBegan.Add(apmOutageBefore))) // the process takes load for apmOutageBefore of real time
	if err := g.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	time.Sleep(time.Until(down.Add(apmOutageLength))) // the outage lasts apmOutageLength of the process's real time
	// What the buffer holds, just before Elasticsearch comes back.
	held := metricSum(t, g, "otelcol_processor_buffer_memory_spans") + metricSum(t, g, "otelcol_processor_buffer_disk_spans") +
		metricSum(t, g, "otelcol_processor_buffer_in_flight_spans")
	onDisk := metricSum(t, g, "otelcol_processor_buffer_disk_spans")
	heldPoints := metricSum(t, g, "otelcol_processor_buffer_memory_metric_points") + metricSum(t, g, "otelcol_processor_buffer_disk_metric_points") +
		metricSum(t, g, "otelcol_processor_buffer_in_flight_metric_points")
	// Nothing was stored before the outage: the load began after the previous boundary, so the
	// first window of the run ends during the outage.
	early := len(apmOutageMetrics(t, g, ours))
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	if early > 0 {
		t.Fatalf("%d aggregated documents of the run's services before the recovery; want none (the first window ends during the outage)", early)
	}
	outage := up.Sub(down)
	t.Logf("idle wait %v, load from %s, Elasticsearch down %s - %s (%v), minute boundary %s inside it (%v after it went down)",
		idle.Round(time.Millisecond), loadBegan.Format("15:04:05.000"), down.Format("15:04:05.000"), up.Format("15:04:05.000"),
		outage.Round(time.Millisecond), boundary.Format("15:04:05"), boundary.Sub(down).Round(time.Millisecond))
	t.Logf("before recovery the buffer held %.0f spans (%.0f on disk) and %.0f metric points", held, onDisk, heldPoints)
	// The schedule is what makes the window ending at the boundary an outage window: a start or a
	// sleep delayed by a loaded machine could move the boundary out of it.
	if boundary.Sub(down) < apmOutageMarginStart/2 || up.Sub(boundary) < apmOutageMarginEnd/2 {
		t.Fatalf("the minute boundary %s is not inside the outage %s - %s: the run cannot show the outage window's delivery",
			boundary.Format("15:04:05.000"), down.Format("15:04:05.000"), up.Format("15:04:05.000"))
	}
	// The outage window's points were in the buffer, waiting for Elasticsearch.
	if heldPoints == 0 {
		t.Errorf("just before the recovery the buffer held no metric points; want the outage window's (exported at %s)", boundary.Format("15:04:05"))
	}
	// The spans acknowledged before the recovery: the backlog the buffer holds.
	load.mu.Lock()
	backlog := make([]string, 0, len(load.acked))
	for id := range load.acked {
		backlog = append(backlog, id)
	}
	load.mu.Unlock()
	var loadEnded time.Time
	loadDone := make(chan struct{})
	go func() {
		wg.Wait()
		loadEnded = time.Now()
		close(loadDone)
	}()

	// From the recovery on, while the load goes on: the backlog, then every accepted span, and
	// the outage window's documents of every service in each of the four 1m data streams, all
	// delivered by the buffer once Elasticsearch is back (before any stop).
	waitCtx, cancelWait := context.WithDeadline(ctx, up.Add(60*time.Second))
	defer cancelWait()
	var backlogAt, spansAt, windowAt time.Time
	var seen map[string]int
	var windowDocs []apmMetricDoc
	missingSets := func(docs []apmMetricDoc) []string {
		have := map[string]bool{}
		for _, d := range docs {
			have[fmt.Sprint(d.Resource.Attributes["service.name"])+" "+d.index] = true
		}
		var missing []string
		for _, s := range services {
			for _, set := range apmMetricSets {
				if k := s + " metrics-" + set + ".1m.otel-default"; !have[k] {
					missing = append(missing, k)
				}
			}
		}
		return missing
	}
	missingSpans := func() int {
		n := 0
		load.mu.Lock()
		defer load.mu.Unlock()
		for id := range load.acked {
			if seen[id] == 0 {
				n++
			}
		}
		return n
	}
	for {
		ended := false
		select {
		case <-loadDone:
			ended = true
		default:
		}
		if spansAt.IsZero() {
			seen = spanArrivals(g)
			if backlogAt.IsZero() {
				n := 0
				for _, id := range backlog {
					if seen[id] > 0 {
						n++
					}
				}
				if n == len(backlog) {
					backlogAt = time.Now()
				}
			}
			// Complete only once the load has ended: until then more are accepted.
			if ended && missingSpans() == 0 {
				spansAt = time.Now()
			}
		}
		if windowAt.IsZero() {
			if windowDocs = apmOutageMetrics(t, g, ours); len(missingSets(windowDocs)) == 0 {
				windowAt = time.Now()
			}
		}
		if !spansAt.IsZero() && !windowAt.IsZero() {
			break
		}
		if waitCtx.Err() != nil {
			<-loadDone
			t.Fatalf("60 s after the recovery: %d accepted spans missing; outage window documents missing: %v",
				missingSpans(), missingSets(windowDocs))
		}
		time.Sleep(250 * time.Millisecond) // polling what the process has delivered so far
	}
	load.mu.Lock()
	acked := len(load.acked)
	load.mu.Unlock()
	if acked == 0 {
		t.Fatalf("nothing was accepted: statuses %v, transport errors %d", load.statuses, load.transport)
	}
	// The outage window's documents are complete once the buffer holds no metric points: the
	// window was exported whole at the boundary, and the next export is the stop's.
	heldPointsNow := func() float64 {
		return metricSum(t, g, "otelcol_processor_buffer_memory_metric_points") + metricSum(t, g, "otelcol_processor_buffer_disk_metric_points") +
			metricSum(t, g, "otelcol_processor_buffer_in_flight_metric_points")
	}
	for heldPointsNow() > 0 {
		if waitCtx.Err() != nil {
			t.Fatalf("60 s after the recovery the buffer still holds %.0f metric points", heldPointsNow())
		}
		time.Sleep(250 * time.Millisecond) // polling what the process has delivered so far
	}
	windowDocs = apmOutageMetrics(t, g, ours)
	windowIDs := map[string]bool{}
	for _, d := range windowDocs {
		windowIDs[d.index+"/"+d.id] = true
	}
	refusedByBuffer := metricSum(t, g, "otelcol_processor_buffer_refused_spans_total")
	t.Logf("after the recovery (polled every 250 ms): the %d spans accepted during and before the outage in %v, the outage window's %d documents in %v; "+
		"the load ended %v after it, every accepted span in %v",
		len(backlog), backlogAt.Sub(up).Round(time.Millisecond), len(windowDocs), windowAt.Sub(up).Round(time.Millisecond),
		loadEnded.Sub(up).Round(time.Millisecond), spansAt.Sub(up).Round(time.Millisecond))

	// The window open at the end: a clean stop exports it into the buffer, the restart delivers it.
	stopped := time.Now()
	g.stopAndFlush(t)
	g.start(t)
	load.mu.Lock()
	want := map[string]int{}   // spans the connector counted, per service
	wantTx := map[string]int{} // transactions (one per request attempt it counted)
	perSvc := map[string]apmOutageCounts{}
	for s, c := range load.perSvc {
		perSvc[s] = *c
		// A 429 came from the buffer, after the fan-out: the connector had counted the attempt.
		// A 503 comes from memory_limiter, before the connector: not counted.
		want[s] = c.acceptedSpan + c.refused429*apmOutageSpans
		wantTx[s] = c.accepted + c.refused429
	}
	load.mu.Unlock()
	summaryOf := func(docs []apmMetricDoc) map[string]float64 {
		m := map[string]float64{}
		for _, d := range docs {
			if d.index == "metrics-service_summary.1m.otel-default" {
				m[fmt.Sprint(d.Resource.Attributes["service.name"])] += metricValue(d.apmDoc, "service_summary", "")
			}
		}
		return m
	}
	restartCtx, cancelRestart := context.WithTimeout(ctx, 30*time.Second)
	defer cancelRestart()
	var docs []apmMetricDoc
	for {
		docs = apmOutageMetrics(t, g, ours)
		sum := summaryOf(docs)
		complete := true
		for _, s := range services {
			complete = complete && sum[s] >= float64(want[s])
		}
		if complete || restartCtx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond) // polling what the process has delivered so far
	}
	lastAt := time.Now()
	// Nothing more can arrive once tracegate has stopped: the counts below are final.
	g.stopAndFlush(t)
	docs = apmOutageMetrics(t, g, ours)
	seen = spanArrivals(g)

	// The clients: only 2xx and the retryable refusals; each request accepted in the end.
	load.mu.Lock()
	statuses, transport, given := statusCounts(load.statuses, load.transport), load.transport, load.given
	sent, refused429, refused503 := 0, 0, 0
	for _, c := range perSvc {
		sent += c.requests * apmOutageSpans
		refused429 += c.refused429
		refused503 += c.refused503
	}
	for s := range load.statuses {
		if s != http.StatusOK && s != http.StatusTooManyRequests && s != http.StatusServiceUnavailable {
			t.Errorf("clients saw status %d (%s): only 200, 429 and 503 are acceptable", s, statuses)
		}
	}
	// An attempt without an answer may or may not have been counted and stored: the counts below
	// could not be predicted. On loopback there is none.
	if transport > 0 {
		t.Errorf("%d attempts got no answer (%s): the connector's count of them is unknown", transport, statuses)
	}
	if given > 0 {
		t.Errorf("%d requests were never accepted (%s)", given, statuses)
	}

	// Spans: each accepted one exactly once; nothing else of the run's services.
	missing, dups, extra := 0, 0, 0
	for id := range load.acked {
		switch n := seen[id]; {
		case n == 0:
			missing++
		case n > 1:
			dups += n - 1
		}
	}
	for id, n := range seen {
		if _, ok := load.acked[id]; !ok {
			extra += n
		}
	}
	load.mu.Unlock()
	t.Logf("clients: %d services, %d spans sent in %d requests over %v (%s); accepted %d spans; refused attempts: %d × 429 (%d spans), %d × 503; buffer refused_spans %.0f",
		len(services), sent, sent/apmOutageSpans, loadEnded.Sub(loadBegan).Round(time.Millisecond), statuses, acked,
		refused429, refused429*apmOutageSpans, refused503, refusedByBuffer)
	t.Logf("spans in traces-*.otel-*: %d distinct accepted, %d missing, %d duplicates, %d not accepted", len(load.acked)-missing, missing, dups, extra)
	if missing > 0 || dups > 0 || extra > 0 {
		t.Errorf("accepted spans: %d missing, %d duplicate documents, %d documents of spans never accepted; want each accepted span once", missing, dups, extra)
	}
	// With default.yaml the buffer overflows to 5 GiB of disk, and this load keeps its memory low:
	// nothing should be refused (measured: none). A refusal would still be counted right below.
	if refused429 > 0 || refused503 > 0 {
		t.Errorf("%d attempts refused with 429 (buffer full) and %d with 503 (memory_limiter); want none at this load with the disk overflow", refused429, refused503)
	}
	// The buffer's own count of refused spans is the clients' 429s.
	if int(refusedByBuffer) != refused429*apmOutageSpans {
		t.Errorf("the buffer counted %.0f refused spans, the clients got 429 for %d", refusedByBuffer, refused429*apmOutageSpans)
	}

	// The metrics: per window (the outage's, delivered after the recovery; the one the stop
	// exported, delivered after the restart) and per service.
	type windowKey struct {
		phase, stream string
	}
	perWindow := map[windowKey]int{}
	perWindowSum := map[string]float64{}
	for _, d := range docs {
		phase := "exported at the stop"
		if windowIDs[d.index+"/"+d.id] {
			phase = "outage window (ended " + boundary.Format("15:04:05") + ")"
		}
		perWindow[windowKey{phase, strings.TrimSuffix(strings.TrimPrefix(d.index, "metrics-"), ".1m.otel-default")}]++
		if d.index == "metrics-service_summary.1m.otel-default" {
			perWindowSum[phase] += metricValue(d.apmDoc, "service_summary", "")
		}
	}
	var lines []string
	for k, n := range perWindow {
		lines = append(lines, fmt.Sprintf("%s: %s %d", k.phase, k.stream, n))
	}
	sort.Strings(lines)
	t.Logf("1m metric documents by window: %s; service_summary by window %v", strings.Join(lines, ", "), perWindowSum)
	t.Logf("last document %v after the recovery (%v after the load; the stop at %v, the restart's windows %v after the stop)",
		lastAt.Sub(up).Round(time.Millisecond), lastAt.Sub(loadEnded).Round(time.Millisecond),
		stopped.Sub(up).Round(time.Millisecond), lastAt.Sub(stopped).Round(time.Millisecond))

	sum := summaryOf(docs)
	tx := map[string]float64{}
	for _, d := range docs {
		if d.index == "metrics-service_transaction.1m.otel-default" {
			tx[fmt.Sprint(d.Resource.Attributes["service.name"])] += metricValue(d.apmDoc, "transaction.duration.summary", "value_count")
		}
	}
	for _, s := range services {
		c := perSvc[s]
		t.Logf("%s: %d requests, %d accepted (%d spans), %d × 429, %d × 503; service_summary %.0f, want %d; transactions %.0f, want %d",
			s, c.requests, c.accepted, c.acceptedSpan, c.refused429, c.refused503, sum[s], want[s], tx[s], wantTx[s])
		if sum[s] != float64(want[s]) {
			t.Errorf("%s: service_summary over the run's 1m windows = %.0f, want %d (%d spans accepted + %d of attempts refused with 429)",
				s, sum[s], want[s], c.acceptedSpan, c.refused429*apmOutageSpans)
		}
		if tx[s] != float64(wantTx[s]) {
			t.Errorf("%s: service_transaction transaction.duration.summary.value_count over the 1m windows = %.0f, want %d",
				s, tx[s], wantTx[s])
		}
	}

	// A replayed delivery of the outage window: the same document again is refused with 409.
	for _, set := range apmMetricSets {
		stream := "metrics-" + set + ".1m.otel-default"
		for _, d := range windowDocs {
			if d.index != stream {
				continue
			}
			if status := bulkCreate(t, g.es.URL(), stream, d.raw); status != http.StatusConflict {
				t.Errorf("%s: the outage window's document again answered %d, want 409 (time-series data stream)\n%s", stream, status, d.raw)
			}
			break
		}
	}
	t.Logf("wall time %v (gateway start to the last check)", time.Since(started).Round(time.Millisecond))
}
