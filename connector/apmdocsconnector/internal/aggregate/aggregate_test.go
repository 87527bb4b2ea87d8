package aggregate

import (
	"testing"
	"time"

	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func transaction(service, name, outcome string, at time.Time, d time.Duration, parent string) *modelpb.APMEvent {
	return &modelpb.APMEvent{
		Timestamp: uint64(at.UnixNano()),
		Service:   &modelpb.Service{Name: service, Environment: "prod", Language: &modelpb.Language{Name: "go"}},
		Agent:     &modelpb.Agent{Name: "opentelemetry/go"},
		Event:     &modelpb.Event{Outcome: outcome, Duration: uint64(d)},
		ParentId:  parent,
		Transaction: &modelpb.Transaction{
			Id: "t", Name: name, Type: "request", Result: "HTTP 2xx",
			RepresentativeCount: 1, Sampled: true,
		},
	}
}

func exitSpan(service, resource string, at time.Time, d time.Duration, weight float64) *modelpb.APMEvent {
	return &modelpb.APMEvent{
		Timestamp: uint64(at.UnixNano()),
		Service: &modelpb.Service{
			Name: service, Environment: "prod", Language: &modelpb.Language{Name: "go"},
			Target: &modelpb.ServiceTarget{Type: "db", Name: resource},
		},
		Agent: &modelpb.Agent{Name: "opentelemetry/go"},
		Event: &modelpb.Event{Outcome: "success", Duration: uint64(d)},
		Span: &modelpb.Span{
			Id: "s", Name: "SELECT", Type: "db", RepresentativeCount: weight,
			DestinationService: &modelpb.DestinationService{Resource: resource},
		},
	}
}

// byName indexes harvested metricsets by name, then by service.
func byName(ms []Metricsets) map[string][]*modelpb.APMEvent {
	out := map[string][]*modelpb.APMEvent{}
	for _, m := range ms {
		for _, e := range m.Events {
			out[e.Metricset.Name] = append(out[e.Metricset.Name], e)
		}
	}
	return out
}

func TestMetricsets(t *testing.T) {
	a := New([]time.Duration{time.Minute}, Limits{Services: 10, Groups: 10})
	a.Add([]*modelpb.APMEvent{
		transaction("cart", "GET /", "success", t0.Add(time.Second), 100*time.Millisecond, ""),
		transaction("cart", "GET /", "success", t0.Add(2*time.Second), 200*time.Millisecond, ""),
		transaction("cart", "GET /", "failure", t0.Add(3*time.Second), 300*time.Millisecond, ""),
		transaction("cart", "GET /", "success", t0.Add(4*time.Second), 50*time.Millisecond, "p"), // not a root
		exitSpan("cart", "postgresql", t0.Add(5*time.Second), 20*time.Millisecond, 2),
		{Timestamp: uint64(t0.UnixNano()), Service: &modelpb.Service{Name: "mailer"}, Log: &modelpb.Log{}},
	})
	assert.Empty(t, a.Harvest(t0.Add(time.Minute+9*time.Second), 10*time.Second), "not due before the delay")
	got := a.Harvest(t0.Add(time.Minute+10*time.Second), 10*time.Second)
	require.Len(t, got, 1)
	assert.Equal(t, "1m", got[0].Interval)
	assert.Equal(t, 0, got[0].Generation)
	m := byName(got)

	require.Len(t, m["service_summary"], 2) // cart and mailer
	require.Len(t, m["transaction"], 3)     // root success, root failure, child success
	var rootSuccess *modelpb.APMEvent
	for _, e := range m["transaction"] {
		if e.Transaction.Root && e.Event.Outcome == "success" {
			rootSuccess = e
		}
		assert.Equal(t, uint64(t0.UnixNano()), e.Timestamp)
		assert.Equal(t, "1m", e.Metricset.Interval)
	}
	require.NotNil(t, rootSuccess)
	assert.Equal(t, uint64(2), rootSuccess.Metricset.DocCount)
	assert.Equal(t, []uint64{1, 1}, rootSuccess.Transaction.DurationHistogram.Counts)
	assert.InDelta(t, 300_000, rootSuccess.Transaction.DurationSummary.Sum, 3000) // µs, within the buckets' precision
	assert.Equal(t, &modelpb.SummaryMetric{Count: 2, Sum: 2}, rootSuccess.Event.SuccessCount)
	assert.Equal(t, "GET /", rootSuccess.Transaction.Name)
	assert.Equal(t, "go", rootSuccess.Service.Language.Name)

	require.Len(t, m["service_transaction"], 1)
	st := m["service_transaction"][0]
	assert.Equal(t, uint64(4), st.Metricset.DocCount)
	assert.Equal(t, uint64(4), st.Event.SuccessCount.Count)
	assert.InDelta(t, 3.0, st.Event.SuccessCount.Sum, 0)

	require.Len(t, m["service_destination"], 1)
	sd := m["service_destination"][0]
	assert.Equal(t, uint64(2), sd.Metricset.DocCount, "weighted by the representative count")
	assert.Equal(t, &modelpb.AggregatedDuration{Count: 2, Sum: uint64(40 * time.Millisecond)}, sd.Span.DestinationService.ResponseTime)
	assert.Equal(t, "postgresql", sd.Service.Target.Name)
	assert.Zero(t, a.Pending())
}

func TestLateEventsOpenTheWindowAgain(t *testing.T) {
	a := New([]time.Duration{time.Minute, 10 * time.Minute}, Limits{Services: 10, Groups: 10})
	a.Add([]*modelpb.APMEvent{transaction("cart", "GET /", "success", t0, time.Millisecond, "")})
	first := a.Harvest(t0.Add(time.Minute), 0)
	require.Len(t, first, 1)
	assert.Equal(t, 1, a.Pending(), "10m still open; the 1m window was written")
	a.Add([]*modelpb.APMEvent{transaction("cart", "GET /", "success", t0, time.Millisecond, "")})
	second := a.Harvest(t0.Add(2*time.Minute), 0)
	require.Len(t, second, 1)
	assert.Equal(t, first[0].Start, second[0].Start)
	assert.Equal(t, 1, second[0].Generation)
	all := a.HarvestAll(t0.Add(2 * time.Minute))
	require.Len(t, all, 1)
	assert.Equal(t, "10m", all[0].Interval)
}

func TestOverflow(t *testing.T) {
	a := New([]time.Duration{time.Minute}, Limits{Services: 2, Groups: 2})
	var events []*modelpb.APMEvent
	for _, svc := range []string{"a", "b", "c", "d"} {
		events = append(events, transaction(svc, "GET /", "success", t0, time.Millisecond, ""))
	}
	for _, name := range []string{"x", "y", "z"} {
		events = append(events, transaction("a", name, "success", t0, time.Millisecond, ""))
	}
	a.Add(events)
	m := byName(a.HarvestAll(t0))
	services := map[string]bool{}
	for _, e := range m["service_summary"] {
		services[e.Service.Name] = true
	}
	assert.Equal(t, map[string]bool{"a": true, "b": true, Overflow: true}, services)
	var overflowCount uint64
	for _, e := range m["transaction"] {
		if e.Transaction.Name == Overflow {
			overflowCount += e.Metricset.DocCount
		}
	}
	assert.Equal(t, uint64(5), overflowCount, "a's 3 new names and _other's 2 services beyond the 2 groups")
	total := uint64(0)
	for _, e := range m["service_transaction"] {
		total += e.Metricset.DocCount
	}
	assert.Equal(t, uint64(7), total, "nothing lost")
}

func TestUnweightedEventsOnlyNameTheirService(t *testing.T) {
	a := New([]time.Duration{time.Minute}, Limits{Services: 10, Groups: 10})
	tx := transaction("cart", "GET /", "success", t0, time.Millisecond, "")
	tx.Transaction.RepresentativeCount = 0
	internal := exitSpan("cart", "", t0, time.Millisecond, 1)
	internal.Service.Target = nil
	a.Add([]*modelpb.APMEvent{tx, internal})
	m := byName(a.HarvestAll(t0))
	for _, e := range m["service_summary"] {
		assert.Equal(t, "cart", e.Service.Name)
	}
	assert.Empty(t, m["transaction"])
	assert.Empty(t, m["service_destination"])
}

func TestIntervalName(t *testing.T) {
	assert.Equal(t, "1m", IntervalName(time.Minute))
	assert.Equal(t, "60m", IntervalName(time.Hour))
	assert.Equal(t, "30s", IntervalName(30*time.Second))
}
