package httpserve

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLimitsErrors(t *testing.T) {
	ok := Limits{MaxRequestBodySize: 1 << 20, MaxConcurrentRequests: 8, QueueTimeout: time.Second, RefusalWait: time.Second}
	for name, tc := range map[string]struct {
		change func(*Limits)
		want   string
	}{
		"valid":             {func(*Limits) {}, ""},
		"no body":           {func(l *Limits) { l.MaxRequestBodySize = 0 }, "max_request_body_size must be between 1 and 1073741824 bytes, got 0"},
		"body over 1 GiB":   {func(l *Limits) { l.MaxRequestBodySize = MaxBodyLimit + 1 }, "max_request_body_size must be between"},
		"no slot":           {func(l *Limits) { l.MaxConcurrentRequests = 0 }, "max_concurrent_requests must be between 1 and 100000, got 0"},
		"too many slots":    {func(l *Limits) { l.MaxConcurrentRequests = MaxConcurrentLimit + 1 }, "max_concurrent_requests"},
		"negative queue":    {func(l *Limits) { l.QueueTimeout = -time.Second }, "queue_timeout must not be negative, got -1s"},
		"negative refusal":  {func(l *Limits) { l.RefusalWait = -1 }, "refusal_wait must be between 0 and 1m0s"},
		"refusal over 1min": {func(l *Limits) { l.RefusalWait = 2 * time.Minute }, "refusal_wait must be between 0 and 1m0s, got 2m0s"},
	} {
		t.Run(name, func(t *testing.T) {
			l := ok
			tc.change(&l)
			err := errors.Join(l.Errors()...)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
