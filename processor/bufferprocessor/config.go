package bufferprocessor

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
)

// Storage modes.
const (
	// ModeOverflow writes a batch to disk only when the memory queue is full.
	ModeOverflow = "overflow"
	// ModeWriteAhead writes every batch to disk before ConsumeTraces (ConsumeLogs, ConsumeMetrics) returns.
	ModeWriteAhead = "write_ahead"
)

// Fsync policies.
const (
	FsyncAlways   = "always"
	FsyncInterval = "interval"
	FsyncNever    = "never"
)

// What to do when memory and disk are full.
const (
	// WhenFullRefuse returns a retryable RESOURCE_EXHAUSTED error to the caller.
	WhenFullRefuse = "refuse"
	// WhenFullDropOldest deletes the oldest queued data to make room, and counts it.
	WhenFullDropOldest = "drop_oldest"
)

// Bounds checked by Validate.
const (
	maxThreads       = 1024
	maxQueueSize     = 1_000_000
	maxBatchItemsCap = 1_000_000
	maxCapacityMiB   = 1 << 20 // 1 TiB
	maxFsyncInterval = time.Minute
	maxRetryInterval = time.Hour
	maxShutdown      = time.Hour
	maxBatchWait     = time.Minute
	maxFullWait      = time.Minute
)

// Config is the buffer processor's configuration.
type Config struct {
	// Threads is the number of workers delivering to the next consumer, i.e. the number of
	// deliveries (Elasticsearch bulks) in flight. Default 8; 1..1024.
	Threads int `mapstructure:"threads"`
	// QueueSize is the memory queue's capacity in batches (one batch = one ConsumeTraces,
	// ConsumeLogs or ConsumeMetrics call). The queue is also bounded to 256 MiB of serialized data.
	// Default 100; 1..1000000. The deprecated key buffer still sets it (see Unmarshal).
	QueueSize int `mapstructure:"queue_size"`
	// MaxBatchItems, when > 0, lets a worker merge consecutive queued batches into one delivery of
	// at most this many items — spans, log records or metric data points, per the pipeline's
	// signal — and at most 8 MiB serialized. 0 (default) delivers batches as queued. A delivery
	// that fails is retried as it was merged, never merged again. The deprecated key
	// max_batch_spans still sets it.
	MaxBatchItems int `mapstructure:"max_batch_items"`
	// MaxBatchWait, with max_batch_items, lets batches gather in memory into one delivery: a worker
	// does not take fewer than max_batch_items items until the oldest queued batch has waited this
	// long (the batch processor's timeout). ConsumeTraces does not wait for it; only the time to
	// Elasticsearch does. 0 (default): deliver what is queued at once. 0..1m.
	MaxBatchWait time.Duration `mapstructure:"max_batch_wait"`
	// Storage adds a disk log. Absent (default): memory only.
	Storage configoptional.Optional[StorageConfig] `mapstructure:"storage"`
	// WhenFull is what happens when memory and disk are full: "refuse" (default) returns a
	// retryable error (gRPC RESOURCE_EXHAUSTED, HTTP 429); "drop_oldest" deletes the oldest data and
	// counts it in processor_buffer_dropped_spans{reason="full"}.
	WhenFull string `mapstructure:"when_full"`
	// FullWait, with when_full refuse and no storage, holds a batch that finds the memory queue
	// full for up to this long, until a delivery makes room, before refusing it: the client waits
	// (as behind the batch processor) instead of sending again at once, so fewer requests are
	// decoded only to be refused. The caller's deadline (a gRPC client's) ends the wait too. 0 (default):
	// refuse at once. 0..1m.
	FullWait time.Duration `mapstructure:"full_wait"`
	// Retry is the backoff for retryable errors from the next consumer.
	Retry RetryConfig `mapstructure:"retry"`
	// ShutdownTimeout bounds how long Shutdown waits for deliveries when the collector gives no
	// deadline (it gives none on SIGTERM). With storage, in-flight deliveries may finish within it;
	// then they are cancelled and their records saved to disk. Without storage, workers drain the
	// memory queue within it; what is left is counted as dropped. Keep it below the platform's
	// kill timeout (Kubernetes: terminationGracePeriodSeconds, 30s by default). Default 10s; 1ms..1h.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`

	// renamed records which deprecated keys the configuration used, for the warnings at Start and
	// for Validate.
	renamed []renamedKeyUse
}

// renamedKey is a setting's old name, still read as the new one.
type renamedKey struct{ old, current string }

// renamedKeys: the memory queue's size was called buffer, the processor's own name (queue_size
// says what it is); max_batch_spans became max_batch_items when the buffer took logs and metrics.
var renamedKeys = []renamedKey{
	{old: "buffer", current: "queue_size"},
	{old: "max_batch_spans", current: "max_batch_items"},
}

// renamedKeyUse is how a configuration used a deprecated key.
type renamedKeyUse struct {
	renamedKey
	both bool // set together with its new name: Validate refuses it
}

// Unmarshal reads the configuration, taking the deprecated keys for their new names.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	var m map[string]any
	for _, k := range renamedKeys {
		if !conf.IsSet(k.old) {
			continue
		}
		if m == nil {
			m = conf.ToStringMap()
		}
		use := renamedKeyUse{renamedKey: k}
		if _, both := m[k.current]; both {
			use.both = true
		} else {
			m[k.current] = m[k.old]
		}
		delete(m, k.old)
		cfg.renamed = append(cfg.renamed, use)
	}
	if m != nil {
		conf = confmap.NewFromStringMap(m)
	}
	return conf.Unmarshal(cfg)
}

// keyName is how Validate names a setting: with the deprecated name the configuration used.
func (cfg *Config) keyName(current string) string {
	for _, u := range cfg.renamed {
		if u.current == current && !u.both {
			return u.old + " (now " + current + ")"
		}
	}
	return current
}

// StorageConfig configures the disk log.
type StorageConfig struct {
	// Directory holds the log; created if missing, owned by one buffer at a time (flock). Required.
	Directory string `mapstructure:"directory"`
	// CapacityMiB bounds the log's files, in MiB (2^20 bytes). Default 5120; 1..1048576.
	CapacityMiB int64 `mapstructure:"capacity_mib"`
	// Mode is "overflow" (default: disk only when memory is full) or "write_ahead" (every batch on
	// disk before ConsumeTraces, ConsumeLogs or ConsumeMetrics returns).
	Mode string `mapstructure:"mode"`
	// Fsync is "always" (fsync before acknowledging; concurrent writers share one fsync),
	// "interval" (default: acknowledge once written to the OS, fsync every fsync_interval) or "never".
	Fsync string `mapstructure:"fsync"`
	// FsyncInterval is the period of the "interval" policy. Default 100ms; 1ms..1m.
	FsyncInterval time.Duration `mapstructure:"fsync_interval"`
}

// RetryConfig is the exponential backoff for retryable delivery errors. There is deliberately no
// "enabled: false": giving up on a retryable error would lose acknowledged data.
type RetryConfig struct {
	// InitialInterval is the first wait after a failure; it doubles up to MaxInterval, with ±20%
	// jitter. Default 1s; 1ms..1h.
	InitialInterval time.Duration `mapstructure:"initial_interval"`
	// MaxInterval caps the wait between attempts, and so between two probes while the next
	// consumer fails: how long after it is back deliveries may take to resume. Default 5s;
	// initial_interval..1h.
	MaxInterval time.Duration `mapstructure:"max_interval"`
	// MaxElapsed, when > 0, drops a delivery (counted, reason "retry_exhausted") after retrying it
	// for this long. Default 0: retry for as long as it takes.
	MaxElapsed time.Duration `mapstructure:"max_elapsed"`
}

// maxIntervalDefault is retry.max_interval's default. A probe is one small attempt at a time (see
// circuitBreaker), so probing every 5 s costs a failing Elasticsearch next to nothing, and after
// an outage delivery resumes within about 6 s of its recovery, not up to 36 s as with 30 s.
const maxIntervalDefault = 5 * time.Second

var _ component.Config = (*Config)(nil)

func defaultStorage() StorageConfig {
	return StorageConfig{
		CapacityMiB:   5120,
		Mode:          ModeOverflow,
		Fsync:         FsyncInterval,
		FsyncInterval: 100 * time.Millisecond,
	}
}

// Validate checks every setting and bound. Storage settings are checked by StorageConfig.Validate.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Threads < 1 || cfg.Threads > maxThreads {
		errs = append(errs, fmt.Errorf("threads must be between 1 and %d, got %d", maxThreads, cfg.Threads))
	}
	for _, u := range cfg.renamed {
		if u.both {
			errs = append(errs, fmt.Errorf("%s and %s are both set: %s is the deprecated name of %s, keep %s only",
				u.old, u.current, u.old, u.current, u.current))
		}
	}
	if cfg.QueueSize < 1 || cfg.QueueSize > maxQueueSize {
		errs = append(errs, fmt.Errorf("%s must be between 1 and %d, got %d", cfg.keyName("queue_size"), maxQueueSize, cfg.QueueSize))
	}
	if cfg.MaxBatchItems < 0 || cfg.MaxBatchItems > maxBatchItemsCap {
		errs = append(errs, fmt.Errorf("%s must be between 0 and %d, got %d", cfg.keyName("max_batch_items"), maxBatchItemsCap, cfg.MaxBatchItems))
	}
	switch {
	case cfg.MaxBatchWait < 0 || cfg.MaxBatchWait > maxBatchWait:
		errs = append(errs, fmt.Errorf("max_batch_wait must be between 0 and %v, got %v", maxBatchWait, cfg.MaxBatchWait))
	case cfg.MaxBatchWait > 0 && cfg.MaxBatchItems == 0:
		errs = append(errs, errors.New("max_batch_wait needs max_batch_items > 0: without merging there is nothing to wait for"))
	}
	if cfg.WhenFull != WhenFullRefuse && cfg.WhenFull != WhenFullDropOldest {
		errs = append(errs, fmt.Errorf("when_full must be %q or %q, got %q", WhenFullRefuse, WhenFullDropOldest, cfg.WhenFull))
	}
	if cfg.FullWait < 0 || cfg.FullWait > maxFullWait {
		errs = append(errs, fmt.Errorf("full_wait must be between 0 and %v, got %v", maxFullWait, cfg.FullWait))
	}
	r := cfg.Retry
	if r.InitialInterval < time.Millisecond || r.InitialInterval > maxRetryInterval {
		errs = append(errs, fmt.Errorf("retry.initial_interval must be between 1ms and %v, got %v", maxRetryInterval, r.InitialInterval))
	}
	if r.MaxInterval < r.InitialInterval || r.MaxInterval > maxRetryInterval {
		errs = append(errs, fmt.Errorf("retry.max_interval must be between retry.initial_interval (%v) and %v, got %v", r.InitialInterval, maxRetryInterval, r.MaxInterval))
	}
	if r.MaxElapsed < 0 {
		errs = append(errs, fmt.Errorf("retry.max_elapsed must not be negative, got %v", r.MaxElapsed))
	}
	if cfg.ShutdownTimeout < time.Millisecond || cfg.ShutdownTimeout > maxShutdown {
		errs = append(errs, fmt.Errorf("shutdown_timeout must be between 1ms and %v, got %v", maxShutdown, cfg.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// Validate checks the storage settings.
func (s *StorageConfig) Validate() error {
	var errs []error
	if s.Directory == "" {
		errs = append(errs, errors.New("directory must be set"))
	}
	if s.CapacityMiB < 1 || s.CapacityMiB > maxCapacityMiB {
		errs = append(errs, fmt.Errorf("capacity_mib must be between 1 and %d, got %d", maxCapacityMiB, s.CapacityMiB))
	}
	if s.Mode != ModeOverflow && s.Mode != ModeWriteAhead {
		errs = append(errs, fmt.Errorf("mode must be %q or %q, got %q", ModeOverflow, ModeWriteAhead, s.Mode))
	}
	if s.Fsync != FsyncAlways && s.Fsync != FsyncInterval && s.Fsync != FsyncNever {
		errs = append(errs, fmt.Errorf("fsync must be %q, %q or %q, got %q", FsyncAlways, FsyncInterval, FsyncNever, s.Fsync))
	}
	if s.FsyncInterval < time.Millisecond || s.FsyncInterval > maxFsyncInterval {
		errs = append(errs, fmt.Errorf("fsync_interval must be between 1ms and %v, got %v", maxFsyncInterval, s.FsyncInterval))
	}
	return errors.Join(errs...)
}
