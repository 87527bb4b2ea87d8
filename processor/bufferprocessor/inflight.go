package bufferprocessor

import (
	"sync"
	"time"
)

// inFlight tracks the deliveries in progress, retries included. A worker's batches leave the
// memory queue and the disk log's unread part when it takes them, so without this the gauges read
// zero while an outage holds everything in retries.
type inFlight[T any] struct {
	mu         sync.Mutex
	items      int64
	memItems   int64 // of those, the items only in memory (no disk record): lost if a delivery never returns
	retrying   int64 // of those, the items of deliveries that failed at least once
	deliveries map[int]inFlightDelivery
	nextID     int
}

type inFlightDelivery struct {
	items, memItems int64
	oldest          time.Time // when the delivery's oldest batch was enqueued
	retrying        bool
}

// inFlightStats is what the gauges read.
type inFlightStats struct {
	items, retrying int64
	oldest          time.Time // when the oldest item in flight was enqueued (zero when none)
}

func newInFlight[T any]() *inFlight[T] {
	return &inFlight[T]{deliveries: map[int]inFlightDelivery{}}
}

// begin records a delivery of batches and returns its id for end.
func (f *inFlight[T]) begin(batches []batch[T]) int {
	d := inFlightDelivery{memItems: memoryItems(batches)}
	for _, b := range batches {
		d.items += b.items
		if d.oldest.IsZero() || b.enqueued.Before(d.oldest) {
			d.oldest = b.enqueued
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.deliveries[f.nextID] = d
	f.items += d.items
	f.memItems += d.memItems
	return f.nextID
}

// markRetrying records that delivery id failed and will be retried (once; later failures change
// nothing).
func (f *inFlight[T]) markRetrying(id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deliveries[id]
	if !ok || d.retrying {
		return
	}
	d.retrying = true
	f.deliveries[id] = d
	f.retrying += d.items
}

// end forgets the delivery id: accepted, dropped (counted) or back in the queue or on disk.
func (f *inFlight[T]) end(id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deliveries[id]
	f.items -= d.items
	f.memItems -= d.memItems
	if d.retrying {
		f.retrying -= d.items
	}
	delete(f.deliveries, id)
}

// stats returns the items in flight, those in retry, and when the oldest was enqueued.
func (f *inFlight[T]) stats() inFlightStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := inFlightStats{items: f.items, retrying: f.retrying}
	for _, d := range f.deliveries {
		if s.oldest.IsZero() || d.oldest.Before(s.oldest) {
			s.oldest = d.oldest
		}
	}
	return s
}

// memoryOnly returns the items in flight that have no disk record.
func (f *inFlight[T]) memoryOnly() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.memItems
}
