// One trace request from start to reply: check, admit, read, decode, translate, hand to the
// pipeline, answer and count.

package ddtracereceiver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/internal/ddsampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/ratesampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

func (r *ddReceiver) tracesHandler(ep endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.agentHeaders(w)
		rep := r.serveTraces(req.Context(), ep, req)
		status := http.StatusOK
		if rep != nil {
			status = rep.status
		}
		writeReply(w, req, ep, status, rep, r.rates)
		r.countRequest(req.Context(), req, ep, status)
	})
}

// writeReply answers as the agent does: taken and refused payloads get the route's success body
// (tracers parse the rates from it), errors their text.
func writeReply(w http.ResponseWriter, req *http.Request, ep endpoint, status int, rep *reply, rates *ratesampler.Sampler) {
	switch {
	case rep != nil && !rep.refused:
		http.Error(w, rep.body, status)
	case ep.rates:
		w.Header().Set("Content-Type", "application/json")
		body := rateReplyBody(w, req, rates)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write(okBody)
	}
}

// countRequest records the request by status and what the tracer says it dropped. The spans the
// pipeline took or refused are the standard receiver metrics' (receiverhelper.ObsReport, in consume).
func (r *ddReceiver) countRequest(ctx context.Context, req *http.Request, ep endpoint, status int) {
	statusAttrs := ep.attrs.ok
	if status != http.StatusOK {
		statusAttrs = metric.WithAttributes(attribute.String("endpoint", ep.name), semconv.HTTPResponseStatusCode(status))
	}
	r.telemetry.ReceiverDdtraceRequests.Add(ctx, 1, statusAttrs)
	if status/100 == 2 {
		// Only what the tracer takes as delivered: on an error it sends the same counts again.
		r.countClientDrops(ctx, req, ep)
	}
}

// serveTraces reads, decodes, translates and forwards one request. It returns nil, or what went
// wrong.
func (r *ddReceiver) serveTraces(ctx context.Context, ep endpoint, req *http.Request) *reply {
	realStatus := isTruthy(req.Header.Get("Datadog-Send-Real-Http-Status"))
	if err := checkRequest(ep, req); err != nil {
		drain(req.Body)
		return r.reject(ctx, ep, realStatus, 0, err)
	}
	// queue_timeout bounds the two waits together (a slot, then decode memory): tracers time out
	// after 2 s (Python, JS), and a request held past that is lost or sent again.
	queueDeadline := time.Now().Add(r.cfg.QueueTimeout)
	if err := r.admitSlot(ctx, req, queueDeadline); err != nil {
		return r.reject(ctx, ep, realStatus, 0, err)
	}
	defer r.releaseSlot()
	waitLeft := time.Until(queueDeadline) // the body's upload is the client's time, not the queue's

	buf := r.bodies.get(req.ContentLength)
	defer r.bodies.put(buf)
	if err := r.readBody(ctx, ep, req, buf); err != nil {
		return r.reject(ctx, ep, realStatus, 0, err)
	}
	reserved, err := r.admitDecode(ctx, buf.Len(), time.Now().Add(waitLeft))
	if err != nil {
		return r.reject(ctx, ep, realStatus, 0, err)
	}
	// Held until the traces were taken (or refused for good): the payload lives until then.
	defer r.decodeMemory.Release(reserved)
	if spans, err := r.translateAndConsume(ctx, ep, req, buf.Bytes()); err != nil {
		return r.reject(ctx, ep, realStatus, spans, err)
	}
	return nil
}

// checkRequest refuses what no body can make right: the method, a browser, the media type.
func checkRequest(ep endpoint, req *http.Request) error {
	switch {
	case req.Method != http.MethodPost && req.Method != http.MethodPut:
		return errMethodNotAllow
	case req.Header.Get("Sec-Fetch-Site") == "cross-site":
		return errCrossSite
	case ep.jsonOnly && strings.Contains(req.Header.Get("Content-Type"), "msgpack"):
		return fmt.Errorf("%w: %s accepts JSON only", errUnsupportedMT, ep.name)
	}
	return nil
}

// readBody reads the whole body into buf and records its size.
func (r *ddReceiver) readBody(ctx context.Context, ep endpoint, req *http.Request, buf *bytes.Buffer) error {
	if _, err := buf.ReadFrom(req.Body); err != nil {
		return &readError{err}
	}
	_ = req.Body.Close()
	r.telemetry.ReceiverDdtraceRequestSize.Record(ctx, int64(buf.Len()), ep.attrs.endpoint)
	if buf.Len() == 0 {
		return errEmptyBody
	}
	return nil
}

// translateAndConsume decodes body, translates it and hands the traces to the pipeline. It returns
// the number of spans offered (also with the pipeline's error).
func (r *ddReceiver) translateAndConsume(ctx context.Context, ep endpoint, req *http.Request, body []byte) (int, error) {
	payloads, skipped, err := r.decode(ep, req, body)
	if err != nil {
		return 0, &decodeError{err}
	}
	r.filterChunks(ctx, ep, payloads)
	r.countRates(ctx, ep, req, payloads)
	r.dropRejected(ctx, ep, payloads, skipped)
	// The traces hold none of the payloads' memory, only their strings; the payloads are kept
	// until the pipeline took the traces, for a re-offer (consumeWaiting).
	defer func() {
		for i := range payloads {
			payloads[i].Release()
		}
	}()
	r.obfuscate(ctx, payloads)
	h := headersOf(req)
	res := r.translator.ToTraces(payloads, h)
	r.countDropped(ctx, ep, res.Dropped)
	r.countDroppedEventAttributes(ctx, ep, res.DroppedEventAttributes)
	if res.Spans == 0 {
		return 0, nil
	}
	retranslate := func() ptrace.Traces { return r.translator.ToTraces(payloads, h).Traces }
	return res.Spans, r.consume(ctx, res.Traces, res.Spans, retranslate)
}

// decode decodes body. The rejected chunks are left out undecoded where the endpoint can, and
// when neither the filters nor rate_by_service would read them before they are dropped.
func (r *ddReceiver) decode(ep endpoint, req *http.Request, body []byte) ([]payload.Payload, payload.Skipped, error) {
	contentType := req.Header.Get("Content-Type")
	readBeforeDrop := r.filter != nil || (r.rates != nil && !ep.forwarded)
	if ep.decodeDropping != nil && r.cfg.DropRejectedChunks && !readBeforeDrop {
		return ep.decodeDropping(contentType, body, ddsampler.Rejected)
	}
	payloads, err := ep.decode(contentType, body)
	return payloads, payload.Skipped{}, err
}

// headersOf reads what the tracer says about itself.
func headersOf(req *http.Request) translator.Headers {
	h := translator.Headers{
		Lang:          req.Header.Get("Datadog-Meta-Lang"),
		LangVersion:   req.Header.Get("Datadog-Meta-Lang-Version"),
		TracerVersion: req.Header.Get("Datadog-Meta-Tracer-Version"),
		ContainerID:   req.Header.Get("Datadog-Container-ID"),
		// Tracers send "yes" (dd-trace-go) or "true".
		ComputedTopLevel: req.Header.Get("Datadog-Client-Computed-Top-Level") != "",
	}
	if h.ContainerID == "" {
		// Datadog-Entity-ID: "ci-<container id>" (or "cid-"); "in-<inode>" names a cgroup inode,
		// which only the node's agent could resolve.
		entity := req.Header.Get("Datadog-Entity-ID")
		for _, prefix := range []string{"cid-", "ci-"} {
			if id, ok := strings.CutPrefix(entity, prefix); ok {
				h.ContainerID = id
				break
			}
		}
	}
	return h
}
