// One request on a decoding route, from start to reply: method, slot, body, media type, decode,
// offer to the pipeline (again for a moment if it refuses), answer and count.

package datakitreceiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tracegate/tracegate/internal/refusalwait"
)

// signal is what one route takes: the formats it decodes, how, and where the result goes.
type signal[T any] struct {
	// format is the decoder's format for a media type (the parameters cut off), false when the
	// route does not take it.
	format  func(mediaType string) (string, bool)
	decode  func(format string, body []byte) (T, error)
	items   func(T) int
	start   func(context.Context) context.Context
	end     func(ctx context.Context, format string, items int, err error)
	consume func(context.Context, T) error
	// reply writes the success answer and returns its status.
	reply func(w http.ResponseWriter, format string) int
}

// requestError is an answer other than success, with its status.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// serveSignal serves one route of sig.
func serveSignal[T any](r *datakitReceiver, path string, sig signal[T]) http.Handler {
	attrs := func(status int) metric.AddOption {
		return metric.WithAttributes(attribute.String("path", path), attribute.Int("http.response.status_code", status))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		format, err := receive(r, req, sig)
		var status int
		if err != nil {
			status = err.status
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			http.Error(w, err.msg, status)
		} else {
			status = sig.reply(w, format)
		}
		r.telemetry.ReceiverDatakitRequests.Add(req.Context(), 1, attrs(status))
	})
}

// receive takes one request: it returns the format it was decoded in, or the answer to give.
func receive[T any](r *datakitReceiver, req *http.Request, sig signal[T]) (string, *requestError) {
	if req.Method != http.MethodPost && req.Method != http.MethodPut {
		return "", &requestError{http.StatusMethodNotAllowed, req.Method + " not allowed: POST the data"}
	}
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	format, ok := sig.format(mediaType)
	if !ok {
		return "", &requestError{http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported media type %q", mediaType)}
	}
	if err := r.acquireSlot(req.Context()); err != nil {
		return format, err
	}
	defer func() { <-r.slots }()
	buf := bodies.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bodies.Put(buf) }()
	if _, err := buf.ReadFrom(req.Body); err != nil {
		return format, readError(err)
	}
	return format, offer(req.Context(), r, sig, format, buf.Bytes())
}

// acquireSlot waits up to queue_timeout for a free max_concurrent_requests slot.
func (r *datakitReceiver) acquireSlot(ctx context.Context) *requestError {
	t := time.NewTimer(r.cfg.QueueTimeout)
	defer t.Stop()
	select {
	case r.slots <- struct{}{}:
		return nil
	case <-t.C:
		return &requestError{http.StatusTooManyRequests, "too many requests in progress: send again later"}
	case <-ctx.Done():
		return &requestError{http.StatusServiceUnavailable, "the client went away"}
	}
}

// readError is the answer to a body that could not be read.
func readError(err error) *requestError {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &requestError{http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than max_request_body_size (%d bytes)", tooLarge.Limit)}
	}
	return &requestError{http.StatusBadRequest, "cannot read the body: " + err.Error()}
}

// offer decodes body and hands it on within one receiver operation; data the pipeline refused
// for a moment is decoded afresh and offered again for up to refusal_wait.
func offer[T any](ctx context.Context, r *datakitReceiver, sig signal[T], format string, body []byte) *requestError {
	data, err := sig.decode(format, body)
	if err != nil {
		ctx = sig.start(ctx)
		sig.end(ctx, format, 0, err)
		return &requestError{http.StatusBadRequest, fmt.Sprintf("cannot decode the %s body: %v", format, err)}
	}
	ctx = sig.start(ctx)
	n := sig.items(data)
	err = refusalwait.Offer(ctx, r.cfg.RefusalWait, func(attempt int) error {
		if attempt > 0 {
			// A processor before the refusing one may have changed the first offer in place.
			data, _ = sig.decode(format, body)
		}
		return sig.consume(ctx, data)
	})
	sig.end(ctx, format, n, err)
	switch {
	case err == nil:
		return nil
	case consumererror.IsPermanent(err):
		return &requestError{http.StatusBadRequest, "the pipeline refused the data for good: " + err.Error()}
	default:
		return &requestError{http.StatusTooManyRequests, "the pipeline cannot take the data now: send again later"}
	}
}
