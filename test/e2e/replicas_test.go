package e2e

// Replicas of one tier: two tracegate processes with the Kibana APM overlay behind one Service,
// writing to one Elasticsearch.

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestReplicasAPMAggregatesAddUp: the traffic of three services is split between two replicas.
// Every span is stored once, and per service the sums over both replicas' 1m documents (spans in
// service_summary, transactions in service_transaction) equal what was sent. Each replica's
// aggregates carry its own signal_to_metrics.service.instance.id (the process's random
// service.instance.id), so the two documents of a window never collide in the time-series data
// streams (the second would be refused with 409 and Kibana would count half).
func TestReplicasAPMAggregatesAddUp(t *testing.T) {
	// Mostly waiting for a minute's edge: run beside the other APM tests.
	t.Parallel()
	es := startStandin(t, "9.2.0")
	opts := gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm.yaml"}, es: es}
	replicas := []*gateway{startGatewayWith(t, opts), startGatewayWith(t, opts)}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	const services, tracesPerService, spansPerTrace = 3, 10, 3 // sendAPMTrace: a root and two children
	id := newTestID()[:8]
	ours := map[string]bool{}
	for s := range services {
		name := fmt.Sprintf("replicas-%s-%d", id, s)
		ours[name] = true
		for i := range tracesPerService {
			sendAPMTrace(ctx, t, replicas[(s+i)%2].endpoints.OTLPHTTP, name)
		}
	}
	const spans = services * tracesPerService * spansPerTrace
	if err := es.WaitForSpans(ctx, spans); err != nil {
		t.Fatalf("%v; stand-in: %+v", err, es.Stats())
	}
	// The 1m windows end at the next minute boundary, at the same instant on both replicas:
	// their documents have the same @timestamp and differ only by the instance id. (A clean stop
	// would export them earlier, each at its own stop time, and hide a collision.)
	var docs []apmMetricDoc
	complete := func() bool {
		docs = apmOutageMetrics(t, replicas[0], ours)
		sum, _ := apmTotals(docs)
		for s := range ours {
			if sum[s] < tracesPerService*spansPerTrace {
				return false
			}
		}
		return true
	}
	for !complete() {
		select {
		case <-ctx.Done():
			t.Fatalf("the aggregates never added up: %d documents of the services", len(docs))
		case <-time.After(250 * time.Millisecond):
		}
	}
	for _, r := range replicas {
		r.stopAndFlush(t)
	}
	docs = apmOutageMetrics(t, replicas[0], ours)

	seen := spanArrivals(replicas[0])
	for spanID, n := range seen {
		if n != 1 {
			t.Errorf("span %s stored %d times", spanID, n)
		}
	}
	sum, tx := apmTotals(docs)
	writers := map[string]map[string]bool{}
	for _, d := range docs {
		s := fmt.Sprint(d.Resource.Attributes["service.name"])
		if writers[s] == nil {
			writers[s] = map[string]bool{}
		}
		writers[s][fmt.Sprint(d.Resource.Attributes["signal_to_metrics.service.instance.id"])] = true
	}
	for s := range ours {
		t.Logf("%s: service_summary %.0f, transactions %.0f, written by %d replicas", s, sum[s], tx[s], len(writers[s]))
		if sum[s] != tracesPerService*spansPerTrace || tx[s] != tracesPerService {
			t.Errorf("%s: service_summary %.0f and transactions %.0f over both replicas; want %d and %d",
				s, sum[s], tx[s], tracesPerService*spansPerTrace, tracesPerService)
		}
		if len(writers[s]) != 2 {
			t.Errorf("%s: aggregates from %d instance ids %v; want one per replica", s, len(writers[s]), writers[s])
		}
	}
	if st := es.Stats(); st.RejectedItems != 0 {
		t.Errorf("%d items refused (%v); want none: the replicas' documents must not collide", st.RejectedItems, st.RejectedReasons)
	}
}

// apmTotals sums, per service, the spans of service_summary and the transactions of
// service_transaction over the 1m documents.
func apmTotals(docs []apmMetricDoc) (spans, transactions map[string]float64) {
	spans, transactions = map[string]float64{}, map[string]float64{}
	for _, d := range docs {
		s := fmt.Sprint(d.Resource.Attributes["service.name"])
		switch d.index {
		case "metrics-service_summary.1m.otel-default":
			spans[s] += metricValue(d.apmDoc, "service_summary", "")
		case "metrics-service_transaction.1m.otel-default":
			transactions[s] += metricValue(d.apmDoc, "transaction.duration.summary", "value_count")
		}
	}
	return spans, transactions
}
