package ddtracereceiver

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/consumer/consumererror"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func TestStatusFor(t *testing.T) {
	retryable := errors.New("data refused due to high memory usage")
	for _, tt := range []struct {
		name       string
		err        error
		realStatus bool
		refusal    int
		want       reply
	}{
		{"body too large", &readError{fmt.Errorf("read: %w", &http.MaxBytesError{Limit: 10})}, false, 200, reply{status: 413, body: "payload-too-large"}},
		{"read timeout", &readError{&net.OpError{Op: "read", Err: timeoutErr{}}}, false, 200, reply{status: 408, body: "timeout"}},
		{"read deadline exceeded is a timeout", &readError{os.ErrDeadlineExceeded}, false, 200, reply{status: 408, body: "timeout"}},
		{"body cut off", &readError{io.ErrUnexpectedEOF}, false, 200, reply{status: 400, body: "unexpected-eof"}},
		{"broken gzip", &readError{gzip.ErrChecksum}, false, 200, reply{status: 400, body: "reading body: gzip: invalid checksum"}},
		{"connection reset", &readError{syscall.ECONNRESET}, true, 200, reply{status: 400, body: "reading body: connection reset by peer"}},
		{
			"pipeline timeout is a refusal", fmt.Errorf("export: %w", os.ErrDeadlineExceeded), true, 200,
			reply{status: 429, body: "export: " + os.ErrDeadlineExceeded.Error(), refused: true},
		},
		{
			"pipeline EOF is a refusal", fmt.Errorf("Post http://es:9200/_bulk: %w", io.EOF), false, 200,
			reply{status: 200, body: "Post http://es:9200/_bulk: EOF", refused: true},
		},
		{"empty body", errEmptyBody, false, 200, reply{status: 400, body: "unexpected-eof"}},
		{"truncated", &decodeError{io.ErrUnexpectedEOF}, false, 200, reply{status: 400, body: "unexpected-eof"}},
		{
			"bad msgpack", &decodeError{errors.New("msgp: attempted to decode type \"int\" with method for \"map\"")}, false, 200,
			reply{status: 400, body: "decoding payload: msgp: attempted to decode type \"int\" with method for \"map\""},
		},
		{"msgpack on a JSON route", fmt.Errorf("%w: v0.2 accepts JSON only", errUnsupportedMT), false, 200, reply{status: 415, body: "unsupported media type: v0.2 accepts JSON only"}},
		{"cross-site", errCrossSite, false, 200, reply{status: 403, body: "cross-site request refused"}},
		{"method", errMethodNotAllow, false, 200, reply{status: 405, body: "method not allowed"}},
		{"permanent pipeline error", consumererror.NewPermanent(errors.New("bad data")), false, 200, reply{status: 400, body: "Permanent error: bad data"}},
		{"refused, agent default", retryable, false, 200, reply{status: 200, body: retryable.Error(), refused: true}},
		{"refused, real status header", retryable, true, 200, reply{status: 429, body: retryable.Error(), refused: true}},
		{"refused, configured 503", retryable, false, 503, reply{status: 503, body: retryable.Error(), refused: true}},
		{"queue timeout", errQueueTimeout, true, 200, reply{status: 429, body: errQueueTimeout.Error(), refused: true}},
		{"client went away", context.Canceled, false, 429, reply{status: 429, body: context.Canceled.Error(), refused: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, statusFor(tt.err, tt.realStatus, tt.refusal))
		})
	}
}

func TestIsTruthy(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "0": false, "f": false, "F": false, "FALSE": false, "False": false, "false": false,
		"1": true, "t": true, "true": true, "yes": true,
	} {
		assert.Equal(t, want, isTruthy(v), v)
	}
}
