package loadgen

import (
	"bytes"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/elastic/apm-data/model/modelpb"
)

// TestElasticAPMIntakeEvents checks what the intake body says beyond the spans every protocol
// carries: which spans are transactions, each span's nearest transaction, span counts, types,
// results, timestamps and the metadata, as apm-data decodes them.
func TestElasticAPMIntakeEvents(t *testing.T) {
	start := time.Unix(1_700_000_000, 123_456_789)
	env := []tracemodel.Attr{{Key: "deployment.environment", Str: "production"}, {Key: "service.version", Str: "1.4.2"}}
	with := func(attrs ...tracemodel.Attr) []tracemodel.Attr {
		return append(append([]tracemodel.Attr{}, env...), attrs...)
	}
	method := tracemodel.Attr{Key: "http.request.method", Str: "GET"}
	status := func(code int64) tracemodel.Attr {
		return tracemodel.Attr{Key: "http.response.status_code", Type: tracemodel.AttrInt, Int: code}
	}
	tr := tracemodel.Trace{TraceHi: 0x8000000000000abc, TraceLo: 0x8000000000000def, Service: "check.out", Host: "checkout-1", Spans: []tracemodel.Span{
		{
			SpanID: 0xa1, Resource: "GET /orders", Kind: tracemodel.KindServer, Start: start, Duration: 50 * time.Millisecond, Error: true,
			Attrs: with(method, status(500), tracemodel.Attr{Key: "url.path", Str: "/orders"}),
		},
		{
			SpanID: 0xb2, ParentID: 0xa1, Resource: "GET /pricing", Kind: tracemodel.KindClient, Start: start, Duration: 20 * time.Millisecond,
			Attrs: with(method, status(200), tracemodel.Attr{Key: "server.address", Str: "pricing"}, tracemodel.Attr{Key: "server.port", Type: tracemodel.AttrInt, Int: 8080}),
		},
		// The downstream service's entry span, in the same payload: a transaction of its own.
		{
			SpanID: 0xc3, ParentID: 0xb2, Resource: "GET /price", Kind: tracemodel.KindServer, Start: start, Duration: 10 * time.Millisecond,
			Attrs: with(method, status(200)),
		},
		{
			SpanID: 0xd4, ParentID: 0xc3, Resource: "compute", Kind: tracemodel.KindInternal, Start: start, Duration: 1500 * time.Microsecond,
			Attrs: with(tracemodel.Attr{Key: "cache.hit", Type: tracemodel.AttrBool, Bool: true}),
		},
		{
			SpanID: 0xe5, ParentID: 0xa1, Resource: "SELECT orders", Kind: tracemodel.KindClient, Start: start, Duration: time.Millisecond,
			Attrs: with(tracemodel.Attr{Key: "db.system", Str: "postgresql"}, tracemodel.Attr{Key: "db.name", Str: "shop"}),
		},
		// Its parent is not in the payload: no transaction to name.
		{SpanID: 0xf6, ParentID: 0x99, Resource: "orphan", Kind: tracemodel.KindInternal, Start: start, Duration: time.Millisecond},
	}}
	parts, err := Encode(t.Context(), ElasticAPMIntake, tr)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(parts[0], []byte("\n")); n != len(tr.Spans)+1 || !bytes.HasSuffix(parts[0], []byte("\n")) {
		t.Fatalf("%d lines, want the metadata and %d events", n, len(tr.Spans))
	}
	events := decodeElasticAPM(t, parts[0])
	if len(events) != len(tr.Spans) {
		t.Fatalf("%d events, want %d", len(events), len(tr.Spans))
	}
	want := []struct {
		txn          bool
		transaction  string // transaction_id of a span
		typ, subtype string
		started      uint32
	}{
		{txn: true, typ: "request", started: 2},
		{transaction: "00000000000000a1", typ: "external", subtype: "http"},
		{txn: true, typ: "request", started: 1},
		{transaction: "00000000000000c3", typ: "app", subtype: "internal"},
		{transaction: "00000000000000a1", typ: "db", subtype: "postgresql"},
		{typ: "app", subtype: "internal"},
	}
	for i, ev := range events {
		w, s := want[i], tr.Spans[i]
		if ev.Timestamp != uint64(s.Start.Truncate(time.Microsecond).UnixNano()) {
			t.Errorf("event %d: timestamp %d, want %v", i, ev.Timestamp, s.Start)
		}
		if svc := ev.GetService(); svc.GetName() != "check_out" || svc.GetEnvironment() != "production" || svc.GetVersion() != "1.4.2" {
			t.Errorf("event %d: service %v", i, svc)
		}
		if a := ev.GetAgent(); a.GetName() != tracemodel.APMAgentName || a.GetVersion() != tracemodel.APMAgentVersion {
			t.Errorf("event %d: agent %v", i, a)
		}
		for _, k := range []string{"deployment_environment", "service_version"} {
			if _, ok := ev.Labels[k]; ok {
				t.Errorf("event %d: label %s beside the metadata", i, k)
			}
		}
		if w.txn {
			checkTransaction(t, i, ev, w.typ, w.started)
			continue
		}
		if ev.Type() != modelpb.SpanEventType || ev.Span.Type != w.typ || ev.Span.Subtype != w.subtype {
			t.Errorf("event %d: %v %q/%q, want a span %q/%q", i, ev.Type(), ev.GetSpan().GetType(), ev.GetSpan().GetSubtype(), w.typ, w.subtype)
		}
		if got := ev.GetTransaction().GetId(); got != w.transaction {
			t.Errorf("event %d: transaction_id %q, want %q", i, got, w.transaction)
		}
	}
	if r := events[0].Transaction.Result; r != "HTTP 5xx" || events[0].Event.Outcome != "failure" {
		t.Errorf("root: result %q, outcome %q; want HTTP 5xx, failure", r, events[0].Event.Outcome)
	}
	if p := events[0].GetUrl().GetPath(); p != "/orders" {
		t.Errorf("root: url.path %q", p)
	}
	if d := events[1].GetDestination(); d.GetAddress() != "pricing" || d.GetPort() != 8080 {
		t.Errorf("client span: destination %v", d)
	}
	if events[2].ParentId != "00000000000000b2" {
		t.Errorf("nested transaction: parent %q", events[2].ParentId)
	}
	if l := events[3].Labels["cache_hit"]; l.GetValue() != "true" {
		t.Errorf("internal span: label cache_hit %v", l)
	}
	if db := events[4].GetSpan().GetDb(); db.GetInstance() != "shop" || db.GetType() != "sql" {
		t.Errorf("db span: db %v", db)
	}
}

func checkTransaction(t *testing.T, i int, ev *modelpb.APMEvent, typ string, started uint32) {
	t.Helper()
	if ev.Type() != modelpb.TransactionEventType || ev.Transaction.Type != typ {
		t.Errorf("event %d: %v %q, want a transaction %q", i, ev.Type(), ev.GetTransaction().GetType(), typ)
		return
	}
	sc := ev.Transaction.GetSpanCount()
	if sc.GetStarted() != started || sc.Dropped == nil || sc.GetDropped() != 0 {
		t.Errorf("event %d: span_count %v, want %d started, 0 dropped", i, sc, started)
	}
}
