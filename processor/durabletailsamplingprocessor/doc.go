//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package durabletailsamplingprocessor decides per whole trace which traces are stored (tail
// sampling), with policies written as for contrib's tail_sampling processor. Unlike contrib's, the
// spans waiting for a decision can be held on disk before the client is answered, so they survive
// a crash; a trace is decided a wait after its last span; a full store refuses clients with a
// retryable error instead of evicting traces. See README.md.
package durabletailsamplingprocessor
