package httpserve

import (
	"fmt"
	"time"
)

// The bounds of the limits every intake receiver sets on its HTTP requests.
const (
	MaxBodyLimit       = 1 << 30 // 1 GiB: above that a single request is a memory hazard
	MaxConcurrentLimit = 100_000
	MaxRefusalWait     = time.Minute
)

// Limits are the settings every intake receiver has under the same names: the largest request
// body, the requests decoded at once, how long a request waits for a slot, and how long refused
// data is offered again before the client is answered.
type Limits struct {
	MaxRequestBodySize    int64
	MaxConcurrentRequests int
	QueueTimeout          time.Duration
	RefusalWait           time.Duration
}

// Errors are the limits out of their bounds, each named by its setting.
func (l Limits) Errors() []error {
	var errs []error
	if l.MaxRequestBodySize < 1 || l.MaxRequestBodySize > MaxBodyLimit {
		errs = append(errs, fmt.Errorf("max_request_body_size must be between 1 and %d bytes, got %d", MaxBodyLimit, l.MaxRequestBodySize))
	}
	if l.MaxConcurrentRequests < 1 || l.MaxConcurrentRequests > MaxConcurrentLimit {
		errs = append(errs, fmt.Errorf("max_concurrent_requests must be between 1 and %d, got %d", MaxConcurrentLimit, l.MaxConcurrentRequests))
	}
	if l.QueueTimeout < 0 {
		errs = append(errs, fmt.Errorf("queue_timeout must not be negative, got %s", l.QueueTimeout))
	}
	if l.RefusalWait < 0 || l.RefusalWait > MaxRefusalWait {
		errs = append(errs, fmt.Errorf("refusal_wait must be between 0 and %s, got %s", MaxRefusalWait, l.RefusalWait))
	}
	return errs
}
