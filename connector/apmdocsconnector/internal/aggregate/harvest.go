package aggregate

import (
	"math"
	"slices"
	"time"

	"github.com/elastic/apm-data/model/modelpb"
)

// Metricsets are the metricsets of one window of one interval.
type Metricsets struct {
	Events []*modelpb.APMEvent
	// Interval and Start name the window; Generation counts the times it was written before,
	// so that documents written for it again (late events) get ids of their own.
	Interval   string
	Start      time.Time
	Generation int
}

// forgetAfter is how long a written window is remembered, for the generation of late events.
const forgetAfter = 3 * time.Hour

// Harvest returns the windows that ended at least delay before now, and forgets them.
func (a *Aggregator) Harvest(now time.Time, delay time.Duration) []Metricsets {
	return a.harvest(func(start time.Time, d time.Duration) bool { return !start.Add(d + delay).After(now) }, now)
}

// HarvestAll returns every open window (at shutdown).
func (a *Aggregator) HarvestAll(now time.Time) []Metricsets {
	return a.harvest(func(time.Time, time.Duration) bool { return true }, now)
}

func (a *Aggregator) harvest(due func(start time.Time, d time.Duration) bool, now time.Time) []Metricsets {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Metricsets
	for i := range a.intervals {
		iv := &a.intervals[i]
		starts := make([]int64, 0, len(iv.open))
		for start := range iv.open {
			if due(time.Unix(0, start), iv.d) {
				starts = append(starts, start)
			}
		}
		slices.Sort(starts)
		for _, start := range starts {
			out = append(out, Metricsets{
				Events: iv.open[start].events(uint64(start), iv.name), Interval: iv.name,
				Start: time.Unix(0, start), Generation: iv.flushed[start],
			})
			iv.flushed[start]++
			delete(iv.open, start)
		}
		for start := range iv.flushed {
			if now.Sub(time.Unix(0, start)) > forgetAfter+iv.d {
				delete(iv.flushed, start)
			}
		}
	}
	return out
}

// Pending is the number of open windows, all intervals together.
func (a *Aggregator) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, iv := range a.intervals {
		n += len(iv.open)
	}
	return n
}

func (w *window) events(ts uint64, interval string) []*modelpb.APMEvent {
	var out []*modelpb.APMEvent
	for key, s := range w.services {
		out = append(out, key.base(ts, "service_summary", interval, 0))
		for tk, h := range s.transactions {
			out = append(out, transactionMetricset(key, tk, h, ts, interval))
		}
		for typ, t := range s.byType {
			out = append(out, serviceTransactionMetricset(key, typ, t, ts, interval))
		}
		for sk, d := range s.destinations {
			out = append(out, destinationMetricset(key, sk, d, ts, interval))
		}
	}
	return out
}

func transactionMetricset(key serviceKey, tk transactionKey, h histogram, ts uint64, interval string) *modelpb.APMEvent {
	total, counts, values := h.buckets()
	e := key.base(ts, "transaction", interval, total)
	e.Transaction = &modelpb.Transaction{
		DurationHistogram: &modelpb.Histogram{Counts: counts, Values: values},
		DurationSummary:   summaryOf(total, counts, values),
	}
	tk.fill(e)
	e.Event.SuccessCount = &modelpb.SummaryMetric{}
	switch tk.outcome {
	case "success":
		e.Event.SuccessCount.Count, e.Event.SuccessCount.Sum = total, float64(total)
	case "failure":
		e.Event.SuccessCount.Count = total
	}
	return e
}

func serviceTransactionMetricset(key serviceKey, typ string, t *typeSums, ts uint64, interval string) *modelpb.APMEvent {
	total, counts, values := t.durations.buckets()
	e := key.base(ts, "service_transaction", interval, total)
	e.Transaction = &modelpb.Transaction{
		Type:              typ,
		DurationHistogram: &modelpb.Histogram{Counts: counts, Values: values},
		DurationSummary:   summaryOf(total, counts, values),
	}
	e.Event.SuccessCount = &modelpb.SummaryMetric{
		Count: uint64(math.Round(t.success + t.failures)), Sum: math.Round(t.success),
	}
	return e
}

func destinationMetricset(key serviceKey, sk spanKey, d *durationSum, ts uint64, interval string) *modelpb.APMEvent {
	count := uint64(math.Round(d.count))
	e := key.base(ts, "service_destination", interval, count)
	if sk.targetType != "" || sk.targetName != "" {
		e.Service.Target = &modelpb.ServiceTarget{Type: sk.targetType, Name: sk.targetName}
	}
	e.Span = &modelpb.Span{
		Name: sk.name,
		DestinationService: &modelpb.DestinationService{
			Resource:     sk.resource,
			ResponseTime: &modelpb.AggregatedDuration{Count: count, Sum: uint64(math.Round(d.sumNanos))},
		},
	}
	e.Event.Outcome = sk.outcome
	return e
}

// summaryOf sums a histogram's values as APM Server does (each bucket's value times its count).
func summaryOf(total uint64, counts []uint64, values []float64) *modelpb.SummaryMetric {
	s := &modelpb.SummaryMetric{Count: total}
	for i, v := range values {
		s.Sum += v * float64(counts[i])
	}
	return s
}
