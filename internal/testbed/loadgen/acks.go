package loadgen

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// TraceID is a 128-bit trace id: its high and low halves.
type TraceID struct{ Hi, Lo uint64 }

// ParseTraceID reads the 32 hex digits a span document carries the trace id as.
func ParseTraceID(s string) (TraceID, bool) {
	if len(s) != 32 {
		return TraceID{}, false
	}
	hi, err1 := strconv.ParseUint(s[:16], 16, 64)
	lo, err2 := strconv.ParseUint(s[16:], 16, 64)
	return TraceID{hi, lo}, err1 == nil && err2 == nil
}

// AppendAck appends the line of an acknowledgement log (tracegen -acks) for a request of trace
// id, answered at at: the id's 32 hex digits and the time in Unix nanoseconds.
func AppendAck(b []byte, id TraceID, at time.Time) []byte {
	return fmt.Appendf(b, "%016x%016x %d\n", id.Hi, id.Lo, at.UnixNano())
}

// ReadAcks reads an acknowledgement log: when each trace's request was answered, in Unix
// nanoseconds (the last answer when a trace id appears twice).
func ReadAcks(r io.Reader) (map[TraceID]int64, error) {
	out := map[TraceID]int64{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		idHex, at, ok := strings.Cut(sc.Text(), " ")
		id, idOK := ParseTraceID(idHex)
		ns, err := strconv.ParseInt(at, 10, 64)
		if !ok || !idOK || err != nil {
			return nil, fmt.Errorf("acknowledgement log line %d: want a 32-digit hex trace id and Unix nanoseconds, got %q", n, sc.Text())
		}
		out[id] = ns
	}
	return out, sc.Err()
}
