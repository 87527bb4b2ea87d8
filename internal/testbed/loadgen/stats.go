package loadgen

import (
	"math"
	"slices"
	"time"
)

// LatencyStats summarize request latencies, in milliseconds.
type LatencyStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	Min   float64 `json:"min_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

// Summarize computes exact statistics from every sample (it sorts samples in place). The
// percentiles are nearest-rank: the smallest sample with at least p% of the samples at or below it.
func Summarize(samples []time.Duration) LatencyStats {
	if len(samples) == 0 {
		return LatencyStats{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return LatencyStats{
		Count: len(samples),
		Mean:  ms(sum) / float64(len(samples)),
		Min:   ms(samples[0]),
		P50:   ms(Percentile(samples, 50)),
		P90:   ms(Percentile(samples, 90)),
		P99:   ms(Percentile(samples, 99)),
		P999:  ms(Percentile(samples, 99.9)),
		Max:   ms(samples[len(samples)-1]),
	}
}

// Timed is one request's latency and when it was due, both from the start of the run.
type Timed struct {
	Due, Took time.Duration
}

// WindowStats summarize the requests that fell due in one second of the run.
type WindowStats struct {
	Second int `json:"second"` // the window [Second, Second+1) s after the start
	LatencyStats
}

// Timeline summarizes the requests of each second of the run, by when they fell due, so a
// tail that belongs to one phase (the first seconds of an outage) is told from one spread over
// the whole run. Seconds without a request are left out.
func Timeline(samples []Timed) []WindowStats {
	bySecond := map[int][]time.Duration{}
	for _, s := range samples {
		sec := int(s.Due / time.Second)
		bySecond[sec] = append(bySecond[sec], s.Took)
	}
	out := make([]WindowStats, 0, len(bySecond))
	for sec, took := range bySecond {
		out = append(out, WindowStats{Second: sec, LatencyStats: Summarize(took)})
	}
	slices.SortFunc(out, func(a, b WindowStats) int { return a.Second - b.Second })
	return out
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	n := len(sorted)
	rank := int(math.Ceil(p*float64(n)/100 - 1e-9)) // ceil(p% of n); the epsilon absorbs float error at exact ranks
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// StatusCounts classify request outcomes.
type StatusCounts struct {
	OK        int `json:"2xx"`
	TooMany   int `json:"429"`
	Server    int `json:"5xx"`
	Other     int `json:"other"`
	Transport int `json:"transport_errors"`
	// Missed counts the requests a fixed-rate run with a duration had due before its end but never
	// sent, every client being blocked by a slow server: left out, they would hide the worst
	// latencies (coordinated omission). Each is in the latency figures with the time from when it
	// was due to the end of the run, a lower bound.
	Missed int `json:"missed,omitempty"`
	// Codes counts every HTTP status code or gRPC code name seen ("200", "ResourceExhausted").
	Codes map[string]int `json:"codes"`
}

func (c *StatusCounts) add(o StatusCounts) {
	c.OK += o.OK
	c.TooMany += o.TooMany
	c.Server += o.Server
	c.Other += o.Other
	c.Transport += o.Transport
	c.Missed += o.Missed
	if c.Codes == nil {
		c.Codes = map[string]int{}
	}
	for k, v := range o.Codes {
		c.Codes[k] += v
	}
}
