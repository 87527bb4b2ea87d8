// POST /intake/v2/events: an agent's NDJSON stream (metadata first, then events), decoded by
// spanjson (common spans) and apm-data (APM Server's own decoder: everything else), converted
// whole, then handed to the pipeline once per signal.

package elasticapmreceiver

import (
	"bufio"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modelpb"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/convert"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/spanjson"
)

// batchSize is the events apm-data decodes per callback (APM Server's).
const batchSize = 10

// decoded is one request's events, converted, and the events themselves, from which a refused
// signal is converted afresh before it is offered again.
type decoded struct {
	out *convert.Output
	// spans are the events spanjson decoded, attached to metadata, when they were converted;
	// events are apm-data's (and, when the events are handed on as they are, spanjson's).
	spans    []spanjson.Event
	metadata *modelpb.APMEvent
	events   []*modelpb.APMEvent
	// bySpanjson is how many of the events spanjson decoded (apm-data decoded the rest).
	bySpanjson int
}

// total is how many events the request had.
func (d *decoded) total() int { return len(d.spans) + len(d.events) }

// all is every event of the request in apm-data's form, spanjson's first, as they came.
func (d *decoded) all() []*modelpb.APMEvent {
	all := make([]*modelpb.APMEvent, 0, d.total())
	for _, e := range d.spans {
		all = append(all, e.Labeled(d.metadata))
	}
	return append(all, d.events...)
}

func (r *intakeReceiver) handleEvents(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	res := newResult()
	defer func() { r.telemetry.ReceiverElasticapmRequests.Add(ctx, 1, statusAttr(res.status)) }()
	if msg := checkRequest(req); msg != "" {
		res.add(http.StatusBadRequest, msg, "")
		res.write(w, req)
		return
	}
	if !r.acquireSlot(ctx) {
		res.add(http.StatusServiceUnavailable, fmt.Sprintf(
			"unable to service request: %d requests in progress (max_concurrent_requests) for more than %s", r.cfg.MaxConcurrentRequests, r.cfg.QueueTimeout), "")
		r.warnings.Warn("busy", "otelcol.receiver.elasticapm.requests{http.response.status_code=503}",
			"intake requests answered 503: every decoding slot stayed busy", zap.Duration("queue_timeout", r.cfg.QueueTimeout))
		res.write(w, req)
		return
	}
	defer r.releaseSlot()
	bufs := r.buffers.get()
	defer r.buffers.put(bufs)
	body, err := r.readerOf(w, req.Body, bufs)
	if err != nil {
		res.add(http.StatusBadRequest, "data decoding error: "+err.Error(), "")
		res.write(w, req)
		return
	}
	d := r.decode(ctx, body, bufs, res)
	r.countDecoded(ctx, d)
	r.consume(ctx, d, res)
	res.write(w, req)
}

// checkRequest returns APM Server's message for a request it refuses before reading the body.
func checkRequest(req *http.Request) string {
	if req.Method != http.MethodPost {
		return "only POST requests are supported" // 400, not 405: APM Server's answer, which agents know
	}
	if ct := req.Header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "application/x-ndjson") {
		return fmt.Sprintf("invalid content type: '%s'", ct)
	}
	return ""
}

func (r *intakeReceiver) acquireSlot(ctx context.Context) bool {
	select {
	case r.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(r.cfg.QueueTimeout)
	defer timer.Stop()
	select {
	case r.slots <- struct{}{}:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

func (r *intakeReceiver) releaseSlot() { <-r.slots }

// readerOf is what the decoder reads of a request body: decompressed (when sniffed), checked for
// UTF-8, in lines of at most max_event_size.
func (r *intakeReceiver) readerOf(w http.ResponseWriter, body io.Reader, bufs *requestBuffers) (*bufio.Reader, error) {
	bufs.sniff.Reset(body)
	in, err := decompressSniffed(w, bufs.sniff, r.cfg.MaxRequestBodySize)
	if err != nil {
		return nil, err
	}
	bufs.valid.reset(in)
	bufs.lines.Reset(bufs.valid)
	return bufs.lines, nil
}

// decompressSniffed decompresses a body sent without Content-Encoding that is gzip or zlib, as
// APM Server does (confighttp has decompressed those that name theirs), within limit.
func decompressSniffed(w http.ResponseWriter, br *bufio.Reader, limit int64) (io.Reader, error) {
	magic, err := br.Peek(2)
	if err != nil {
		return br, nil // empty or one byte: the decoder answers that
	}
	var rc io.ReadCloser
	switch {
	case magic[0] == 0x1f && magic[1] == 0x8b:
		rc, err = gzip.NewReader(br)
	case magic[0]&0x0f == 8 && (uint16(magic[0])<<8|uint16(magic[1]))%31 == 0: // RFC 1950's check
		rc, err = zlib.NewReader(br)
	default:
		return br, nil
	}
	if err != nil {
		return nil, err
	}
	return http.MaxBytesReader(w, rc, limit), nil
}

// decode reads the stream whole. Invalid events are answered (400) and counted; the valid ones of
// the same request are kept, and so is what came before a stream error (a body cut short).
func (r *intakeReceiver) decode(ctx context.Context, body *bufio.Reader, bufs *requestBuffers, res *result) *decoded {
	d := &decoded{out: convert.NewOutput()}
	st := split(body, &bufs.held)
	if st.onlyMetadata {
		if metadata, ok := r.metadata.get(st.metadata); ok {
			if err := r.appendSpans(ctx, st.spans, metadata, d); err != nil {
				res.add(http.StatusInternalServerError, err.Error(), "")
			}
			if r.cfg.Output == OutputAPMEvents {
				d.out.Events = convert.CountsOf(d.events)
			}
			return d
		}
	}
	bufs.apmData.Reset(st.forAPMData)
	var stream elasticapm.Result
	carried := false
	err := r.decoder.HandleStream(ctx, &modelpb.APMEvent{Event: &modelpb.Event{}}, bufs.apmData, batchSize, modelpb.ProcessBatchFunc(
		func(ctx context.Context, b *modelpb.Batch) error {
			if !carried && st.metadata != nil { // the first event is the metadata's carrier: the spans' resource
				carried = true
				metadata, err := carriedMetadata(b)
				if err != nil {
					return err
				}
				r.metadata.put(st.metadata, metadata)
				if err := r.appendSpans(ctx, st.spans, metadata, d); err != nil {
					return err
				}
			}
			d.events = append(d.events, *b...)
			if r.cfg.Output == OutputAPMEvents {
				return nil
			}
			return r.converter.Append(ctx, b, d.out)
		}), &stream)
	r.recordInvalid(ctx, &stream, res)
	if r.cfg.Output == OutputAPMEvents {
		d.out.Events = convert.CountsOf(d.events)
	}
	if err != nil {
		status, msg, doc := streamError(err)
		res.add(status, msg, doc)
		r.warnings.Warn(fmt.Sprintf("stream/%d", status), "otelcol.receiver.elasticapm.requests",
			"intake request cut short", zap.Int("status", status), zap.String("error", msg))
	}
	return d
}

// appendSpans converts the events spanjson decoded, once the request's metadata is known. Those
// whose resource is the metadata's (all but those overriding a global label) share it.
func (r *intakeReceiver) appendSpans(ctx context.Context, events []spanjson.Event, metadata *modelpb.APMEvent, d *decoded) error {
	d.bySpanjson += len(events)
	if r.cfg.Output == OutputAPMEvents {
		for _, e := range events { // handed on as they are
			spanjson.Attach(e, metadata)
			d.events = append(d.events, e.Labeled(metadata))
		}
		return nil
	}
	d.spans, d.metadata = events, metadata
	shared := make([]spanjson.Event, 0, len(events))
	var own modelpb.Batch
	for _, e := range events {
		if spanjson.Attach(e, metadata) {
			shared = append(shared, e)
		} else {
			own = append(own, e.Labeled(metadata))
		}
	}
	r.converter.AppendSpans(shared, d.out)
	if len(own) == 0 {
		return nil
	}
	return r.converter.Append(ctx, &own, d.out)
}

// streamError is the reply to an error that ended the stream.
func streamError(err error) (status int, msg, document string) {
	var tooBig *http.MaxBytesError
	var invalid *elasticapm.InvalidInputError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"request body too large: more than %d bytes decompressed (max_request_body_size)", tooBig.Limit), ""
	case errors.As(err, &invalid):
		return http.StatusBadRequest, invalid.Message, invalid.Document
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return http.StatusServiceUnavailable, "request timed out", ""
	}
	return http.StatusBadRequest, "data read error: " + err.Error(), ""
}

// again converts the events afresh, for a re-offer.
func (r *intakeReceiver) again(ctx context.Context, d *decoded) *convert.Output {
	out := convert.NewOutput()
	batch := modelpb.Batch(d.all())
	_ = r.converter.Append(ctx, &batch, out) // converted once already, so it cannot fail now
	return out
}
