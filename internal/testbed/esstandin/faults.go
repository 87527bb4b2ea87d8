package esstandin

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Faults are injected into bulk requests; change them at run time with SetFaults or
// PUT /_standin/faults. The zero value injects nothing.
type Faults struct {
	// Latency is added to every bulk request before it is answered, plus up to LatencyJitter more.
	Latency       Duration `json:"latency"`
	LatencyJitter Duration `json:"latency_jitter"`
	// ItemTooManyRequestsFraction of the items (0..1) are answered 429 es_rejected_execution_exception
	// instead of being indexed, as a node under indexing pressure does.
	ItemTooManyRequestsFraction float64 `json:"item_429_fraction"`
	// RequestUnavailableFraction of the bulk requests (0..1) are answered 503 as a whole.
	RequestUnavailableFraction float64 `json:"request_503_fraction"`
	// ResetConnections closes every connection as soon as it is accepted (and the open ones when
	// set), so clients see connection resets.
	ResetConnections bool `json:"reset_connections"`
	// ReplyLostFraction of the bulk requests (0..1) are indexed and then not answered: the
	// connection is reset instead, as when the network fails after Elasticsearch did the work.
	// Clients that retry them store duplicates.
	ReplyLostFraction float64 `json:"reply_lost_fraction"`
}

// Validate reports fractions outside 0..1 and negative durations.
func (f Faults) Validate() error {
	for name, v := range map[string]float64{
		"item_429_fraction": f.ItemTooManyRequestsFraction, "request_503_fraction": f.RequestUnavailableFraction,
		"reply_lost_fraction": f.ReplyLostFraction,
	} {
		if v < 0 || v > 1 {
			return fmt.Errorf("%s must be between 0 and 1, got %v", name, v)
		}
	}
	if f.Latency < 0 || f.LatencyJitter < 0 {
		return errors.New("latency and latency_jitter must not be negative")
	}
	return nil
}

// Duration is a time.Duration that reads and writes JSON as a Go duration string ("20ms").
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "20ms".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string such as "20ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"20ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
