package bufferprocessor

import (
	"sync"
	"time"
)

// inFlight tracks the deliveries in progress, retries included. A worker's batches leave the
// memory queue and the disk log's unread part when it takes them, so without this the gauges read
// zero while an outage holds everything in retries.
type inFlight struct {
	mu         sync.Mutex
	spans      int64
	deliveries map[int]inFlightDelivery
	nextID     int
}

type inFlightDelivery struct {
	spans  int64
	oldest time.Time // when the delivery's oldest batch was enqueued
}

func newInFlight() *inFlight { return &inFlight{deliveries: map[int]inFlightDelivery{}} }

// begin records a delivery of batches and returns its id for end.
func (f *inFlight) begin(batches []batch) int {
	d := inFlightDelivery{}
	for _, b := range batches {
		d.spans += b.spans
		if d.oldest.IsZero() || b.enqueued.Before(d.oldest) {
			d.oldest = b.enqueued
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.deliveries[f.nextID] = d
	f.spans += d.spans
	return f.nextID
}

// end forgets the delivery id: accepted, dropped (counted) or back in the queue or on disk.
func (f *inFlight) end(id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spans -= f.deliveries[id].spans
	delete(f.deliveries, id)
}

// stats returns the spans in flight and when the oldest of them was enqueued (zero when none).
func (f *inFlight) stats() (spans int64, oldest time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.deliveries {
		if oldest.IsZero() || d.oldest.Before(oldest) {
			oldest = d.oldest
		}
	}
	return f.spans, oldest
}
