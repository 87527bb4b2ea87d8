package bufferprocessor

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// fullRetryDelay is the pause a refused client is asked to take before sending again.
const fullRetryDelay = time.Second

// ErrFull is returned (wrapped) by ConsumeTraces when memory and disk are full and when_full is
// "refuse". It carries the gRPC status RESOURCE_EXHAUSTED, which receivers pass on as it is (OTLP
// gRPC) or map to HTTP 429 (OTLP HTTP); it is not a consumererror.Permanent, so it is retryable.
// The status carries a RetryInfo: OTLP/gRPC clients — the collector's otlp_grpc exporter among them
// (shouldRetry in otlpexporter) — retry RESOURCE_EXHAUSTED only when it is there, and would
// otherwise drop the data as a permanent failure.
var ErrFull = fullError()

func fullError() error {
	st, err := status.New(codes.ResourceExhausted, "buffer is full").
		WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(fullRetryDelay)})
	if err != nil { // cannot happen: RetryInfo always marshals
		return status.Error(codes.ResourceExhausted, "buffer is full")
	}
	return st.Err()
}

// ErrShuttingDown is returned (wrapped) by ConsumeTraces once Shutdown has begun. UNAVAILABLE is
// retryable and maps to HTTP 503.
var ErrShuttingDown = status.Error(codes.Unavailable, "buffer is shutting down")
