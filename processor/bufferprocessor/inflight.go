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
	memSpans   int64 // of those, the spans only in memory (no disk record): lost if a delivery never returns
	deliveries map[int]inFlightDelivery
	nextID     int
}

type inFlightDelivery struct {
	spans, memSpans int64
	oldest          time.Time // when the delivery's oldest batch was enqueued
}

func newInFlight() *inFlight { return &inFlight{deliveries: map[int]inFlightDelivery{}} }

// begin records a delivery of batches and returns its id for end.
func (f *inFlight) begin(batches []batch) int {
	d := inFlightDelivery{memSpans: memorySpans(batches)}
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
	f.memSpans += d.memSpans
	return f.nextID
}

// end forgets the delivery id: accepted, dropped (counted) or back in the queue or on disk.
func (f *inFlight) end(id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deliveries[id]
	f.spans -= d.spans
	f.memSpans -= d.memSpans
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

// memoryOnly returns the spans in flight that have no disk record.
func (f *inFlight) memoryOnly() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.memSpans
}
