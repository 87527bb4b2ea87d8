package loadgen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Datadog sampling priorities a keep fraction gives a trace: what a tracer at
// DD_TRACE_SAMPLE_RATE (or a sampling rule) writes on a trace it kept or dropped. Without a keep
// fraction every trace carries 1 (auto keep).
const (
	PriorityUserReject = -1
	PriorityUserKeep   = 2
)

// prioritySentinel is the priority a sampled pool's payloads are encoded with: a value no other
// metric of a generated span has, so that its one occurrence in the bytes is found and rewritten
// per request like the trace id.
const prioritySentinel = -1234567.890625

// msgpFloat64 is msgpack's float 64 marker; the ddtrace encoders write every metric value with it.
const msgpFloat64 = 0xcb

// lowIDMask keeps the 62 bits of a generated id below its fixed "10" mark (tracemodel.FixID).
const lowIDMask = 1<<62 - 1

// IsDDTrace reports whether protocol is a Datadog tracer protocol: the only ones with a sampling
// priority, hence the only ones a keep fraction applies to.
func IsDDTrace(protocol string) bool {
	return protocol == DDTraceV04 || protocol == DDTraceV05
}

// CheckKeepFraction returns an error unless keepFraction can be used with protocol: 0 (off) with
// any protocol, above 0 and at most 1 with a ddtrace protocol.
func CheckKeepFraction(protocol string, keepFraction float64) error {
	if keepFraction == 0 {
		return nil
	}
	if !IsDDTrace(protocol) {
		return fmt.Errorf("keep fraction %g: only the ddtrace protocols (%s, %s) carry a sampling priority, %s does not", keepFraction, DDTraceV04, DDTraceV05, protocol)
	}
	if !(keepFraction > 0 && keepFraction <= 1) {
		return fmt.Errorf("keep fraction must be above 0 and at most 1, got %g", keepFraction)
	}
	return nil
}

// Kept reports whether the trace whose id has the low 64 bits lo is kept at keepFraction: its 62
// random bits fall in the first keepFraction of their range. It reads the id only, so whoever
// knows the ids knows which traces a collector that honours the priority stores.
func Kept(lo uint64, keepFraction float64) bool {
	if keepFraction >= 1 {
		return true
	}
	return lo&lowIDMask < uint64(keepFraction*(1<<62))
}

// priorityOf is the priority a trace with the low id lo carries at keepFraction.
func priorityOf(lo uint64, keepFraction float64) float64 {
	if Kept(lo, keepFraction) {
		return PriorityUserKeep
	}
	return PriorityUserReject
}

// prioritySlot is where a sampled payload holds its priority's eight bytes.
type prioritySlot struct {
	part, off int
}

// findPrioritySlot finds the one occurrence of the sentinel priority in the encoded parts.
func findPrioritySlot(parts [][]byte) (prioritySlot, error) {
	want := make([]byte, 9)
	want[0] = msgpFloat64
	binary.BigEndian.PutUint64(want[1:], math.Float64bits(prioritySentinel))
	var found []prioritySlot
	for p, b := range parts {
		for off := 0; ; {
			i := bytes.Index(b[off:], want)
			if i < 0 {
				break
			}
			found = append(found, prioritySlot{part: p, off: off + i + 1})
			off += i + len(want)
		}
	}
	if len(found) != 1 {
		return prioritySlot{}, fmt.Errorf("found the sampling priority %d times in the payload, want once", len(found))
	}
	return found[0], nil
}
