package durabletailsamplingprocessor

import (
	"errors"
	"fmt"
	"time"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
)

// Config is the processor's configuration. Its policy keys, and decision_wait, num_traces,
// expected_new_traces_per_sec, decision_cache and sample_on_first_match, are those of contrib's
// tail_sampling processor, so an existing tail_sampling block loads here unchanged.
type Config struct {
	// DecisionWait is how long after a trace's LAST span it is decided (contrib: after its first).
	DecisionWait time.Duration `mapstructure:"decision_wait"`
	// MaxTraceWait decides a trace this long after its first span even if spans keep arriving,
	// so that a trace never holds memory and disk for ever.
	MaxTraceWait time.Duration `mapstructure:"max_trace_wait"`
	// NumTraces bounds the traces waiting at once; beyond it new traces are refused (retryable).
	NumTraces uint64 `mapstructure:"num_traces"`
	// ExpectedNewTracesPerSec sizes the pending index up front (a hint, as in contrib).
	ExpectedNewTracesPerSec uint64 `mapstructure:"expected_new_traces_per_sec"`
	// MaxPendingMiB bounds the encoded size of spans held in memory; beyond it requests are refused.
	MaxPendingMiB int64 `mapstructure:"max_pending_mib"`
	// DecisionCache remembers decided trace ids, so a late span follows its trace's decision.
	DecisionCache DecisionCacheConfig `mapstructure:"decision_cache"`
	// SampleOnFirstMatch stops at the first policy that keeps a trace (a drop policy after it is
	// then not evaluated), as in contrib.
	SampleOnFirstMatch bool            `mapstructure:"sample_on_first_match"`
	Policies           []policy.Config `mapstructure:"policies"`
	// Storage holds the pending spans on disk before the client is answered (unset: memory only).
	Storage StorageConfig `mapstructure:"storage"`
}

// DecisionCacheConfig bounds how many decided trace ids are remembered, and for how long.
type DecisionCacheConfig struct {
	SampledCacheSize    int           `mapstructure:"sampled_cache_size"`
	NonSampledCacheSize int           `mapstructure:"non_sampled_cache_size"`
	TTL                 time.Duration `mapstructure:"ttl"`
}

// StorageConfig is the disk log of pending spans.
type StorageConfig struct {
	// Directory of the log; empty keeps pending spans in memory only (lost on a crash).
	Directory string `mapstructure:"directory"`
	// Fsync: always (before each reply, shared by concurrent requests; survives power loss),
	// interval (every FsyncInterval; survives SIGKILL) or never (survives SIGKILL).
	Fsync         string        `mapstructure:"fsync"`
	FsyncInterval time.Duration `mapstructure:"fsync_interval"`
	// CapacityMiB bounds the log on disk; beyond it requests are refused (retryable).
	CapacityMiB int64 `mapstructure:"capacity_mib"`
	// SegmentMiB is the size of one log file; disk is reclaimed a file at a time.
	SegmentMiB int64 `mapstructure:"segment_mib"`
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	switch {
	case c.DecisionWait <= 0:
		return errors.New("decision_wait must be above 0")
	case c.MaxTraceWait < c.DecisionWait:
		return fmt.Errorf("max_trace_wait (%s) must be at least decision_wait (%s)", c.MaxTraceWait, c.DecisionWait)
	case c.NumTraces == 0:
		return errors.New("num_traces must be above 0")
	case c.MaxPendingMiB <= 0:
		return errors.New("max_pending_mib must be above 0")
	case c.DecisionCache.SampledCacheSize < 0 || c.DecisionCache.NonSampledCacheSize < 0:
		return errors.New("decision_cache sizes must not be negative")
	case c.DecisionCache.TTL <= 0:
		return errors.New("decision_cache.ttl must be above 0")
	}
	if err := c.Storage.validate(); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	return policy.Validate(c.Policies)
}

func (s *StorageConfig) validate() error {
	if s.Directory == "" {
		return nil
	}
	switch s.Fsync {
	case "always", "never":
	case "interval":
		if s.FsyncInterval <= 0 {
			return errors.New("fsync_interval must be above 0 with fsync: interval")
		}
	default:
		return fmt.Errorf("fsync %q: use always, interval or never", s.Fsync)
	}
	if s.SegmentMiB <= 0 || s.CapacityMiB < 2*s.SegmentMiB {
		return errors.New("segment_mib must be above 0 and capacity_mib at least two segments")
	}
	return nil
}
