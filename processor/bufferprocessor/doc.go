//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package bufferprocessor is the "buffer" processor: a bounded memory queue, optionally backed by
// a checksummed disk log, drained by a pool of workers that deliver to the next consumer with
// retries, at least once. See README.md.
package bufferprocessor
