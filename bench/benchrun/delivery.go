package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// delivery is how long spans took from their request's acknowledgement to their arrival in the
// stand-in (a variant's delivery_latency): what a client's "taken" is worth in time until the
// span can be found.
type delivery struct {
	// Latency is over every span document whose trace an acknowledged request carried.
	Latency loadgen.LatencyStats `json:"latency"`
	// Unmatched counts span documents of no acknowledged request (a trace id not in tracegen's
	// log, or none found).
	Unmatched int `json:"unmatched,omitempty"`
}

// arrivals records when each span document reached the stand-in, by its trace id.
type arrivals struct {
	mu   sync.Mutex
	seen []arrival
}

type arrival struct {
	id loadgen.TraceID
	at int64 // Unix nanoseconds
	ok bool  // the document's trace id was read
}

// record is the stand-in's OnSpan function.
func (a *arrivals) record(traceID string) {
	now := time.Now().UnixNano()
	id, ok := loadgen.ParseTraceID(traceID)
	a.mu.Lock()
	a.seen = append(a.seen, arrival{id: id, at: now, ok: ok})
	a.mu.Unlock()
}

// match times every arrival against its trace's acknowledgement (tracegen's -acks log).
func (a *arrivals) match(acks map[loadgen.TraceID]int64) delivery {
	a.mu.Lock()
	defer a.mu.Unlock()
	var d delivery
	took := make([]time.Duration, 0, len(a.seen))
	for _, x := range a.seen {
		ack, ok := acks[x.id]
		if !x.ok || !ok {
			d.Unmatched++
			continue
		}
		// A span may be stored before its request's answer reached the client: 0, not less.
		took = append(took, time.Duration(max(0, x.at-ack)))
	}
	d.Latency = loadgen.Summarize(took)
	return d
}

// readAcks reads tracegen's -acks log.
func readAcks(path string) (map[loadgen.TraceID]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	acks, err := loadgen.ReadAcks(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return acks, nil
}
