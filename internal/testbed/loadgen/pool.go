package loadgen

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"
)

// Payload is one pre-encoded request and where its trace id sits.
type Payload struct {
	Parts [][]byte
	Spans int
	slots []idSlot
	// keepFraction > 0: the payload's priority, at prio, is written per request from the trace id.
	keepFraction float64
	prio         prioritySlot
}

// Pool is a set of pre-encoded payloads of one protocol, each a different trace.
type Pool struct {
	Protocol string
	Payloads []Payload
}

// NewPool pre-encodes n payloads of spansPerRequest spans each for protocol.
func NewPool(ctx context.Context, protocol, service string, n, spansPerRequest int, seed uint64) (*Pool, error) {
	return newPool(ctx, protocol, service, n, spansPerRequest, seed, 0)
}

// newPool is NewPool with a keep fraction (Config.KeepFraction): each request's trace then carries
// the priority Kept gives its trace id.
func newPool(ctx context.Context, protocol, service string, n, spansPerRequest int, seed uint64, keepFraction float64) (*Pool, error) {
	if err := CheckKeepFraction(protocol, keepFraction); err != nil {
		return nil, err
	}
	if n < 1 {
		n = 1
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	now := time.Now()
	p := &Pool{Protocol: protocol}
	for i := 0; i < n; i++ {
		t := tracemodel.NewTrace(r, service, spansPerRequest, now)
		parts, err := encode(ctx, protocol, t, keepFraction > 0)
		if err != nil {
			return nil, err
		}
		slots := findIDSlots(protocol, t, parts)
		if want := expectedSlots(protocol, spansPerRequest); len(slots) != want {
			return nil, fmt.Errorf("%s: found the trace id %d times in the payload, want %d", protocol, len(slots), want)
		}
		pl := Payload{Parts: parts, Spans: spansPerRequest, slots: slots, keepFraction: keepFraction}
		if keepFraction > 0 && spansPerRequest > 0 {
			if pl.prio, err = findPrioritySlot(parts); err != nil {
				return nil, fmt.Errorf("%s: %w", protocol, err)
			}
		}
		p.Payloads = append(p.Payloads, pl)
	}
	return p, nil
}

// Request is a worker's reusable copy of a payload, its trace id rewritten.
type Request struct {
	Parts [][]byte
	Spans int
	// Kept says whether the trace carries a keep decision: priority 2 under a keep fraction (-1
	// when false), always true without one (priority 1).
	Kept bool
	// TraceID is the trace id Fill wrote.
	TraceID TraceID
	bufs    [][]byte
}

// Fill copies payload into r (reusing r's buffers) and writes the trace id (hi, lo) into every
// place the payload carries it; hi and lo are forced into the fixed-width id form. A payload of a
// pool with a keep fraction also gets the priority Kept gives lo.
func (r *Request) Fill(p *Payload, hi, lo uint64) {
	hi, lo = tracemodel.FixID(hi), tracemodel.FixID(lo)
	for len(r.bufs) < len(p.Parts) {
		r.bufs = append(r.bufs, nil)
	}
	r.Parts = r.Parts[:0]
	for i, part := range p.Parts {
		r.bufs[i] = append(r.bufs[i][:0], part...)
		r.Parts = append(r.Parts, r.bufs[i])
	}
	for _, s := range p.slots {
		encodeID(r.Parts[s.part][s.off:s.off+idWidth(s.kind)], s.kind, hi, lo)
	}
	r.Spans = p.Spans
	r.TraceID = TraceID{Hi: hi, Lo: lo}
	r.Kept = true
	if p.keepFraction > 0 && p.Spans > 0 {
		prio := priorityOf(lo, p.keepFraction)
		r.Kept = prio > 0
		binary.BigEndian.PutUint64(r.Parts[p.prio.part][p.prio.off:], math.Float64bits(prio))
	}
}

// splitmix64 is a bijective mixer: distinct sequence numbers give distinct ids.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
