// Package aggregate counts APM Server's events into the metricsets Kibana's APM UI reads —
// transaction, service_transaction, service_destination and service_summary, per interval — as
// APM Server's aggregation does (its groups, its histograms' precision, its overflow into
// `_other`), and returns them as apm-data events for the same encoding as every other document.
package aggregate

import (
	"fmt"
	"sync"
	"time"

	"github.com/elastic/apm-data/model/modelpb"
)

// Overflow is the name that stands for the services and groups beyond the limits.
const Overflow = "_other"

// Limits bound what one window of one interval holds.
type Limits struct {
	// Services is the most services a window holds; the events of more count as `_other`.
	Services int
	// Groups is the most transaction and destination groups a window holds, all services
	// together; the events of more count in their service's `_other` group (at most one more
	// of each kind per service).
	Groups int
}

// Aggregator holds the open windows of each interval.
type Aggregator struct {
	mu        sync.Mutex
	intervals []interval
	limits    Limits
}

type interval struct {
	d    time.Duration
	name string
	open map[int64]*window // by start, unix nanoseconds
	// flushed counts, per window start, the times it was written: an event arriving for a
	// window already written opens it again, and the new metricsets are told apart by it.
	flushed map[int64]int
}

type window struct {
	services map[serviceKey]*service
	groups   int // transaction and destination groups of all services
}

type service struct {
	transactions map[transactionKey]histogram
	byType       map[string]*typeSums
	destinations map[spanKey]*durationSum
}

type typeSums struct {
	durations         histogram
	success, failures float64
}

type durationSum struct{ count, sumNanos float64 }

// New returns an aggregator for the intervals (at least one).
func New(intervals []time.Duration, limits Limits) *Aggregator {
	a := &Aggregator{limits: limits}
	for _, d := range intervals {
		a.intervals = append(a.intervals, interval{d: d, name: IntervalName(d), open: map[int64]*window{}, flushed: map[int64]int{}})
	}
	return a
}

// IntervalName is how APM Server names an interval in metricset.interval and its data stream.
func IntervalName(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// Add counts the events into every interval's window of their timestamp.
func (a *Aggregator) Add(events []*modelpb.APMEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.intervals {
		iv := &a.intervals[i]
		for _, e := range events {
			start := time.Unix(0, int64(e.GetTimestamp())).Truncate(iv.d).UnixNano()
			w := iv.open[start]
			if w == nil {
				w = &window{services: map[serviceKey]*service{}}
				iv.open[start] = w
			}
			a.add(w, e)
		}
	}
}

func (a *Aggregator) add(w *window, e *modelpb.APMEvent) {
	key := serviceKeyOf(e)
	s := w.services[key]
	if s == nil {
		if len(w.services) >= a.limits.Services {
			key = serviceKey{name: Overflow}
			s = w.services[key]
		}
		if s == nil {
			s = &service{transactions: map[transactionKey]histogram{}, byType: map[string]*typeSums{}, destinations: map[spanKey]*durationSum{}}
			w.services[key] = s
		}
	}
	switch e.Type() {
	case modelpb.TransactionEventType:
		if n := e.GetTransaction().GetRepresentativeCount(); n > 0 {
			a.addTransaction(w, s, e, n)
		}
	case modelpb.SpanEventType:
		n := e.GetSpan().GetRepresentativeCount()
		if n > 0 && (e.GetService().GetTarget() != nil || e.GetSpan().GetDestinationService().GetResource() != "") {
			count, nanos := 1.0, float64(e.GetEvent().GetDuration())
			if c := e.GetSpan().GetComposite(); c != nil {
				count, nanos = float64(c.GetCount()), c.GetSum()*float64(time.Millisecond)
			}
			a.addDestination(w, s, spanKeyOf(e), count*n, nanos*n)
		}
	}
	// Every other event only makes its service known (service_summary).
}

func (a *Aggregator) addTransaction(w *window, s *service, e *modelpb.APMEvent, n float64) {
	us := int64(e.GetEvent().GetDuration() / uint64(time.Microsecond))
	key := transactionKeyOf(e)
	typ, outcome := key.typ, key.outcome // service_transaction keeps them past the groups' limit
	h := s.transactions[key]
	if h == nil {
		if w.groups >= a.limits.Groups {
			key = transactionKey{name: Overflow}
			h = s.transactions[key]
		}
		if h == nil {
			h = histogram{}
			s.transactions[key] = h
			w.groups++
		}
	}
	h.record(us, n)
	t := s.byType[typ]
	if t == nil {
		t = &typeSums{durations: histogram{}}
		s.byType[typ] = t
	}
	t.durations.record(us, n)
	switch outcome {
	case "success":
		t.success += n
	case "failure":
		t.failures += n
	}
	for _, d := range e.GetTransaction().GetDroppedSpansStats() {
		k := spanKey{
			outcome: d.GetOutcome(), targetType: d.GetServiceTargetType(), targetName: d.GetServiceTargetName(),
			resource: d.GetDestinationServiceResource(),
		}
		a.addDestination(w, s, k, float64(d.GetDuration().GetCount())*n, float64(d.GetDuration().GetSum())*n)
	}
}

func (a *Aggregator) addDestination(w *window, s *service, key spanKey, count, nanos float64) {
	d := s.destinations[key]
	if d == nil {
		if w.groups >= a.limits.Groups {
			key = spanKey{name: Overflow}
			d = s.destinations[key]
		}
		if d == nil {
			d = &durationSum{}
			s.destinations[key] = d
			w.groups++
		}
	}
	d.count += count
	d.sumNanos += nanos
}
