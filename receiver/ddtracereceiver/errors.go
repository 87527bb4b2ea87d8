// The request errors the receiver tells apart, and the one mapping from them to replies.

package ddtracereceiver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"

	"go.opentelemetry.io/collector/consumer/consumererror"
)

// The request failures the receiver tells apart; statusFor maps them.
var (
	errEmptyBody      = errors.New("empty body")
	errUnsupportedMT  = errors.New("unsupported media type")
	errCrossSite      = errors.New("cross-site request refused")
	errQueueTimeout   = errors.New("too many concurrent requests: no decoder slot within queue_timeout")
	errDecodeMemory   = errors.New("too much decoding in progress: no room in decode_memory_mib within queue_timeout")
	errMethodNotAllow = errors.New("method not allowed")
)

// readError wraps a failure to read the request body: the client's or the connection's doing
// (too large, too slow, cut off, a broken Content-Encoding), never the pipeline's. Only these get
// the read statuses: a pipeline error that happens to wrap io.EOF or a deadline is a refusal.
type readError struct{ err error }

func (e *readError) Error() string { return "reading body: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// decodeError wraps a payload that could not be decoded.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "decoding payload: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// reply is what a failed request gets.
type reply struct {
	status int
	body   string // text body for errors; refusals get the rate body instead
	// refused marks data the pipeline (or the receiver's own concurrency limit) did not take:
	// the tracer may retry it, and it is counted as refused.
	refused bool
}

// Causes of a request not taken: the reason attribute of requests.rejected and the key of the
// once-per-cause warning. A fixed set, so neither the metric nor the log grows with bad traffic.
const (
	causeTooLarge      = "payload_too_large"
	causeReadTimeout   = "read_timeout"
	causeUnsupportedMT = "unsupported_media_type"
	causeCrossSite     = "cross_site"
	causeMethod        = "method_not_allowed"
	causeUnexpectedEOF = "unexpected_eof"
	causeUnreadable    = "unreadable_body"
	causeUndecodable   = "undecodable"
	causePermanent     = "permanent_error"
	causeQueueTimeout  = "queue_timeout"
	causeDecodeMemory  = "decode_memory"
	causeClientGone    = "client_gone"
	causePipeline      = "pipeline_refused"
)

// causeOf classifies a request error, the one place that tells failures apart. Only errors from
// reading the body are read failures: a pipeline error that wraps io.EOF or a timeout is a refusal.
func causeOf(err error) string {
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	var readErr *readError
	var decErr *decodeError
	read, decoded := errors.As(err, &readErr), errors.As(err, &decErr)
	switch {
	case read && errors.As(err, &tooLarge):
		return causeTooLarge
	case read && errors.As(err, &netErr) && netErr.Timeout():
		return causeReadTimeout
	case errors.Is(err, errUnsupportedMT):
		return causeUnsupportedMT
	case errors.Is(err, errCrossSite):
		return causeCrossSite
	case errors.Is(err, errMethodNotAllow):
		return causeMethod
	case errors.Is(err, errEmptyBody), (read || decoded) && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)):
		return causeUnexpectedEOF
	case read: // e.g. a gzip checksum error, a connection reset
		return causeUnreadable
	case decoded:
		return causeUndecodable
	case consumererror.IsPermanent(err):
		return causePermanent
	case errors.Is(err, errQueueTimeout):
		return causeQueueTimeout
	case errors.Is(err, errDecodeMemory):
		return causeDecodeMemory
	case errors.Is(err, context.Canceled):
		return causeClientGone
	}
	return causePipeline // every other pipeline error is retryable: the data was refused, not broken
}

// statusFor maps a request error to the reply. It follows the Datadog Agent
// (pkg/trace/api/responses.go): 413 payload-too-large, 408 on a read timeout, 400 for anything
// undecodable, 415 for msgpack on JSON-only routes, and for refusals 429 when the tracer asked for
// real statuses (Datadog-Send-Real-Http-Status), otherwise refusalStatus. Permanent pipeline errors
// are the data's fault: 400.
func statusFor(err error, realStatus bool, refusalStatus int) reply {
	return replyFor(causeOf(err), err, realStatus, refusalStatus)
}

// replyFor is statusFor for an error already classified.
func replyFor(cause string, err error, realStatus bool, refusalStatus int) reply {
	switch cause {
	case causeTooLarge:
		return reply{status: http.StatusRequestEntityTooLarge, body: "payload-too-large"}
	case causeReadTimeout:
		return reply{status: http.StatusRequestTimeout, body: "timeout"}
	case causeUnsupportedMT:
		return reply{status: http.StatusUnsupportedMediaType, body: err.Error()}
	case causeCrossSite:
		return reply{status: http.StatusForbidden, body: err.Error()}
	case causeMethod:
		return reply{status: http.StatusMethodNotAllowed, body: err.Error()}
	case causeUnexpectedEOF:
		return reply{status: http.StatusBadRequest, body: "unexpected-eof"}
	case causeUnreadable, causeUndecodable, causePermanent:
		return reply{status: http.StatusBadRequest, body: err.Error()}
	}
	status := refusalStatus
	if realStatus {
		status = http.StatusTooManyRequests
	}
	return reply{status: status, body: err.Error(), refused: true}
}

// isTruthy is the agent's isHeaderTrue: set and not a spelling of false.
func isTruthy(v string) bool {
	switch v {
	case "", "0", "f", "F", "FALSE", "False", "false":
		return false
	}
	return true
}
