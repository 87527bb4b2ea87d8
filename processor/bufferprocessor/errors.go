package bufferprocessor // import "github.com/tracegate/tracegate/processor/bufferprocessor"

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrFull is returned (wrapped) by ConsumeTraces when memory and disk are full and when_full is
// "refuse". It carries the gRPC status RESOURCE_EXHAUSTED, which receivers pass on as it is (OTLP
// gRPC) or map to HTTP 429 (OTLP HTTP); it is not a consumererror.Permanent, so it is retryable.
var ErrFull = status.Error(codes.ResourceExhausted, "buffer is full")

// ErrShuttingDown is returned (wrapped) by ConsumeTraces once Shutdown has begun. UNAVAILABLE is
// retryable and maps to HTTP 503.
var ErrShuttingDown = status.Error(codes.Unavailable, "buffer is shutting down")
