package ddtracereceiver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// rateBody tells every tracer to keep 100% of its traces: tracegate samples nothing away.
var rateBody = []byte(`{"rate_by_service":{"service:,env:":1}}` + "\n")

var okBody = []byte("OK\n")

// endpoint is one trace intake route.
type endpoint struct {
	name     string // the version label in telemetry, e.g. "v0.4"
	decode   func(contentType string, body []byte) ([]payload.Payload, error)
	rates    bool // reply with the rate body (v0.4 and later) rather than "OK"
	jsonOnly bool // legacy routes refuse msgpack with 415
}

func single(f func([]byte) (payload.Payload, error)) func(string, []byte) ([]payload.Payload, error) {
	return func(_ string, b []byte) ([]payload.Payload, error) {
		p, err := f(b)
		if err != nil {
			return nil, err
		}
		return []payload.Payload{p}, nil
	}
}

// decodeByMediaType decodes v0.3/v0.4 bodies as the agent does: msgpack for application/msgpack;
// JSON for JSON types, no type or an unparsable one; for any other type JSON, then msgpack.
func decodeByMediaType(contentType string, b []byte) ([]payload.Payload, error) {
	var p payload.Payload
	var err error
	mt, _, perr := mime.ParseMediaType(contentType)
	switch {
	case perr == nil && mt == "application/msgpack":
		p, err = payload.DecodeTracesMsgpack(b)
	case contentType == "" || perr != nil || mt == "application/json" || mt == "text/json":
		p, err = payload.DecodeTracesJSON(b)
	default:
		if p, err = payload.DecodeTracesJSON(b); err != nil {
			p, err = payload.DecodeTracesMsgpack(b)
		}
	}
	if err != nil {
		return nil, err
	}
	return []payload.Payload{p}, nil
}

// decodeSpansJSON decodes the legacy /v0.1/spans body: a flat array of spans, grouped into chunks by
// trace id in order of appearance.
func decodeSpansJSON(_ string, b []byte) ([]payload.Payload, error) {
	wrapped := make([]byte, 0, len(b)+2)
	wrapped = append(append(append(wrapped, '['), bytes.TrimSpace(b)...), ']')
	p, err := payload.DecodeTracesJSON(wrapped)
	if err != nil {
		return nil, err
	}
	out := payload.Payload{NilSpans: p.NilSpans}
	index := map[uint64]int{}
	for _, c := range p.Chunks {
		for _, s := range c.Spans {
			i, ok := index[s.TraceID]
			if !ok {
				i = len(out.Chunks)
				index[s.TraceID] = i
				out.Chunks = append(out.Chunks, payload.Chunk{Priority: payload.PriorityNone})
			}
			out.Chunks[i].Spans = append(out.Chunks[i].Spans, s)
		}
	}
	return []payload.Payload{out}, nil
}

// traceEndpoints are the trace intake routes and how each decodes its body.
func traceEndpoints() map[string]endpoint {
	return map[string]endpoint{
		"/v0.1/spans":      {name: "v0.1", decode: decodeSpansJSON, jsonOnly: true},
		"/v0.2/traces":     {name: "v0.2", decode: decodeByMediaType, jsonOnly: true},
		"/v0.3/traces":     {name: "v0.3", decode: decodeByMediaType},
		"/v0.4/traces":     {name: "v0.4", decode: decodeByMediaType, rates: true},
		"/v0.5/traces":     {name: "v0.5", decode: single(payload.DecodeV05), rates: true},
		"/v0.7/traces":     {name: "v0.7", decode: single(payload.DecodeV07), rates: true},
		"/api/v0.2/traces": {name: "api-v0.2", decode: func(_ string, b []byte) ([]payload.Payload, error) { return payload.DecodeAgentPayload(b) }},
	}
}

func (r *ddReceiver) handler() http.Handler {
	mux := http.NewServeMux()
	for path, ep := range traceEndpoints() {
		mux.Handle(path, r.tracesHandler(ep))
	}
	// Routes whose body tracegate does not store: legacy service lists, instrumentation telemetry
	// (the agent proxies it to Datadog) and DogStatsD over HTTP (dd-trace-js posts its own metrics
	// there at exit, whatever /info says). They are drained, answered as the agent does and counted
	// in the requests metric, so tracers do not log errors.
	discard := func(name string, status int, body []byte) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r.agentHeaders(w)
			drain(req.Body)
			w.WriteHeader(status)
			_, _ = w.Write(body)
			r.telemetry.ReceiverDdtraceRequests.Add(req.Context(), 1, metric.WithAttributes(
				attribute.String("endpoint", name), attribute.Int("http.response.status_code", status)))
		})
	}
	mux.Handle("/v0.3/services", discard("v0.3-services", http.StatusOK, okBody))
	mux.Handle("/v0.4/services", discard("v0.4-services", http.StatusOK, okBody))
	mux.Handle("/telemetry/proxy/", discard("telemetry", http.StatusAccepted, nil))
	mux.Handle("/dogstatsd/v1/proxy", discard("dogstatsd", http.StatusOK, nil))
	mux.Handle("/dogstatsd/v2/proxy", discard("dogstatsd", http.StatusOK, nil))
	mux.HandleFunc("/info", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// libdatadog (the PHP sidecar, .NET, the native writers of Python and Ruby) reads the
		// state from /info's own reply and fails without it.
		w.Header().Set("Datadog-Agent-State", r.state)
		_, _ = w.Write(r.info)
	})
	return mux
}

// agentHeaders are on every reply but /info (which carries only the state): Java re-reads /info
// whenever the state differs.
func (r *ddReceiver) agentHeaders(w http.ResponseWriter) {
	w.Header().Set("Datadog-Agent-Version", r.cfg.AgentVersion)
	w.Header().Set("Datadog-Agent-State", r.state)
}

// drain reads what is left of a body (bounded by the server's body limit), so the connection can
// be reused.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, body)
	_ = body.Close()
}

func (r *ddReceiver) tracesHandler(ep endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.agentHeaders(w)
		ctx := req.Context()
		spans, rep := r.serveTraces(ctx, ep, req)
		status := http.StatusOK
		if rep != nil {
			status = rep.status
		}
		switch {
		case rep == nil || rep.refused:
			if ep.rates {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write(rateBody)
			} else {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(status)
				_, _ = w.Write(okBody)
			}
		default:
			http.Error(w, rep.body, status)
		}
		epAttr := attribute.String("endpoint", ep.name)
		r.telemetry.ReceiverDdtraceRequests.Add(ctx, 1, metric.WithAttributes(epAttr, attribute.Int("http.response.status_code", status)))
		if status/100 == 2 {
			// Only what the tracer takes as delivered: on an error it sends the same counts again.
			r.countClientDrops(ctx, req, ep, epAttr)
		}
		if spans > 0 {
			outcome := "accepted"
			if rep != nil {
				outcome = "refused"
			}
			r.telemetry.ReceiverDdtraceSpans.Add(ctx, int64(spans), metric.WithAttributes(epAttr, attribute.String("outcome", outcome), attribute.String("reason", "")))
		}
	})
}

// countClientDrops records what the tracer says it dropped itself before sending (unsampled
// traces; tracegate's /info asks no tracer to, but dd-trace-py with client-side stats on does),
// and warns once per endpoint: those spans never reach tracegate, so nothing else shows them.
func (r *ddReceiver) countClientDrops(ctx context.Context, req *http.Request, ep endpoint, epAttr attribute.KeyValue) {
	spans := headerCount(req, "Datadog-Client-Dropped-P0-Spans")
	traces := headerCount(req, "Datadog-Client-Dropped-P0-Traces")
	if spans == 0 && traces == 0 {
		return
	}
	r.telemetry.ReceiverDdtraceClientDroppedP0Spans.Add(ctx, spans, metric.WithAttributes(epAttr))
	r.telemetry.ReceiverDdtraceClientDroppedP0Traces.Add(ctx, traces, metric.WithAttributes(epAttr))
	if _, warned := r.clientDropWarned.LoadOrStore(ep.name, true); !warned {
		r.set.Logger.Warn("a tracer drops unsampled traces before sending them; they never reach tracegate "+
			"(counted in otelcol_receiver_ddtrace_client_dropped_p0_spans). Turn its client-side stats off "+
			"(DD_TRACE_STATS_COMPUTATION_ENABLED / DD_TRACE_COMPUTE_STATS=false) to receive every trace",
			zap.String("endpoint", ep.name), zap.String("lang", req.Header.Get("Datadog-Meta-Lang")),
			zap.Int64("spans", spans), zap.Int64("traces", traces))
	}
}

// headerCount reads a non-negative count header; anything else counts as 0.
func headerCount(req *http.Request, name string) int64 {
	n, err := strconv.ParseInt(req.Header.Get(name), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// serveTraces reads, decodes, translates and forwards one request. It returns the number of spans
// handed to the pipeline and nil, or what went wrong.
func (r *ddReceiver) serveTraces(ctx context.Context, ep endpoint, req *http.Request) (int, *reply) {
	realStatus := isTruthy(req.Header.Get("Datadog-Send-Real-Http-Status"))
	fail := func(spans int, err error) (int, *reply) {
		rep := statusFor(err, realStatus, r.cfg.RefusalStatus)
		if rep.refused {
			r.set.Logger.Warn("trace payload refused", zap.String("endpoint", ep.name), zap.Int("spans", spans), zap.Int("status", rep.status), zap.Error(err))
		} else {
			r.set.Logger.Debug("bad trace request", zap.String("endpoint", ep.name), zap.Int("status", rep.status), zap.Error(err))
		}
		return spans, &rep
	}
	switch {
	case req.Method != http.MethodPost && req.Method != http.MethodPut:
		drain(req.Body)
		return fail(0, errMethodNotAllow)
	case req.Header.Get("Sec-Fetch-Site") == "cross-site":
		drain(req.Body)
		return fail(0, errCrossSite)
	case ep.jsonOnly && strings.Contains(req.Header.Get("Content-Type"), "msgpack"):
		drain(req.Body)
		return fail(0, fmt.Errorf("%w: %s accepts JSON only", errUnsupportedMT, ep.name))
	}

	// A bounded number of requests is read and decoded at once, so memory stays bounded whatever
	// the number of connections; the rest wait up to queue_timeout, then are refused.
	// queue_timeout bounds the two waits together (a slot, then decode memory): tracers time out
	// after 2 s (Python, JS), and a request held past that is lost or sent again.
	queueDeadline := time.Now().Add(r.cfg.QueueTimeout)
	if !r.acquireSlot(ctx, queueDeadline) {
		drain(req.Body)
		if ctx.Err() != nil {
			return fail(0, ctx.Err())
		}
		// Not decoded, so its spans are unknown; the tracer's trace count goes into the log.
		if n := req.Header.Get("X-Datadog-Trace-Count"); n != "" {
			return fail(0, fmt.Errorf("%w (X-Datadog-Trace-Count: %s)", errQueueTimeout, n))
		}
		return fail(0, errQueueTimeout)
	}
	defer func() { <-r.slots }()
	waitLeft := time.Until(queueDeadline) // the body's upload is the client's time, not the queue's

	buf := r.getBuffer(req.ContentLength)
	defer r.putBuffer(buf)
	if _, err := buf.ReadFrom(req.Body); err != nil {
		return fail(0, &readError{err})
	}
	_ = req.Body.Close()
	r.telemetry.ReceiverDdtraceRequestSize.Record(ctx, int64(buf.Len()), metric.WithAttributes(attribute.String("endpoint", ep.name)))
	if buf.Len() == 0 {
		return fail(0, errEmptyBody)
	}
	reserved, ok := r.reserveDecodeMemory(ctx, buf.Len(), time.Now().Add(waitLeft))
	if !ok {
		if ctx.Err() != nil {
			return fail(0, ctx.Err())
		}
		return fail(0, errDecodeMemory)
	}
	// Held until the traces were taken (or refused for good): the payload lives until then.
	defer r.decodeMemory.Release(reserved)
	payloads, err := ep.decode(req.Header.Get("Content-Type"), buf.Bytes())
	if err != nil {
		return fail(0, &decodeError{err})
	}
	// The traces hold none of the payloads' memory, only their strings; the payloads are kept
	// until the pipeline took the traces, for a re-offer (consumeWaiting).
	defer func() {
		for i := range payloads {
			payloads[i].Release()
		}
	}()
	h := headersOf(req)
	res := r.translator.ToTraces(payloads, h)
	r.countDropped(ctx, ep, res.Dropped)
	if res.DroppedEventAttributes > 0 {
		// Also in each event's dropped_attributes_count, which reaches Elasticsearch.
		r.set.Logger.Warn("span event attributes past the limit dropped", zap.String("endpoint", ep.name),
			zap.Int("attributes", res.DroppedEventAttributes), zap.Int("limit_per_event", translator.MaxEventAttributes))
	}
	if res.Spans == 0 {
		return 0, nil
	}
	retranslate := func() ptrace.Traces { return r.translator.ToTraces(payloads, h).Traces }
	return r.consume(ctx, res.Traces, res.Spans, retranslate, fail)
}

// decodeExpansion is the memory a request reserves per byte of body before decoding: the most a
// crafted body within the decoders' 32 × budget takes decoded and translated (v0.5 spans of 13
// bytes, all ids set: 54 ×, TestDecodeMemoryReservationCoversTheWorstBody), with a margin.
const decodeExpansion = 64

// reserveDecodeMemory takes decodeExpansion × bodyLen of decode_memory_mib (all of it when that is
// more), waiting until deadline, what is left of queue_timeout (at once when there is room, also
// past the deadline). It returns what it took; false: no room came in time, or the client went
// away.
func (r *ddReceiver) reserveDecodeMemory(ctx context.Context, bodyLen int, deadline time.Time) (int64, bool) {
	n := min(int64(bodyLen)*decodeExpansion, r.cfg.DecodeMemoryMiB<<20)
	if r.decodeMemory.TryAcquire(n) {
		return n, true
	}
	if !time.Now().Before(deadline) {
		return 0, false
	}
	wait, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if err := r.decodeMemory.Acquire(wait, n); err != nil {
		return 0, false
	}
	return n, true
}

// acquireSlot takes a decoder slot, waiting until deadline (a free slot is taken at once, also
// with queue_timeout 0). false: none came in time, or the client went away.
func (r *ddReceiver) acquireSlot(ctx context.Context, deadline time.Time) bool {
	select {
	case r.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case r.slots <- struct{}{}:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (r *ddReceiver) consume(ctx context.Context, td ptrace.Traces, spans int, again func() ptrace.Traces, fail func(int, error) (int, *reply)) (int, *reply) {
	ctx = r.obsrep.StartTracesOp(ctx)
	err := r.consumeWaiting(ctx, td, again)
	r.obsrep.EndTracesOp(ctx, metadata.Type.String(), spans, err)
	if err != nil {
		return fail(spans, err)
	}
	return spans, nil
}

// Backoff between offers of a refused payload: short, because the buffer frees room as soon as a
// delivery completes.
const (
	firstRefusalBackoff = 5 * time.Millisecond
	maxRefusalBackoff   = 100 * time.Millisecond
)

// consumeWaiting hands td to the pipeline and, while the pipeline refuses it with a retryable
// error, offers it again until refusal_wait has passed (or the client went away). Permanent
// errors are returned at once. Each re-offer is a fresh translation (again): a processor before
// the one that refused may have changed td in place, and must not see its own change twice.
// A pipeline fanned out to several exporters may have taken td in one of them before another
// refused it: the re-offer then duplicates it there, as a tracer's own retry would.
func (r *ddReceiver) consumeWaiting(ctx context.Context, td ptrace.Traces, again func() ptrace.Traces) error {
	deadline := time.Now().Add(r.cfg.RefusalWait)
	backoff := firstRefusalBackoff
	for {
		err := r.next.ConsumeTraces(ctx, td)
		left := time.Until(deadline)
		if err == nil || consumererror.IsPermanent(err) || left <= 0 {
			return err
		}
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, maxRefusalBackoff)
		td = again()
	}
}

func (r *ddReceiver) countDropped(ctx context.Context, ep endpoint, dropped map[string]int) {
	for reason, n := range dropped {
		r.telemetry.ReceiverDdtraceSpans.Add(ctx, int64(n), metric.WithAttributes(
			attribute.String("endpoint", ep.name), attribute.String("outcome", "dropped"), attribute.String("reason", reason)))
		r.set.Logger.Warn("invalid spans dropped", zap.String("endpoint", ep.name), zap.String("reason", reason), zap.Int("spans", n))
	}
}

// headersOf reads what the tracer says about itself.
func headersOf(req *http.Request) translator.Headers {
	h := translator.Headers{
		Lang:          req.Header.Get("Datadog-Meta-Lang"),
		LangVersion:   req.Header.Get("Datadog-Meta-Lang-Version"),
		TracerVersion: req.Header.Get("Datadog-Meta-Tracer-Version"),
		ContainerID:   req.Header.Get("Datadog-Container-ID"),
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

// maxPooledBuffer keeps huge bodies from pinning memory in the pool.
const maxPooledBuffer = 4 << 20

func (r *ddReceiver) getBuffer(contentLength int64) *bytes.Buffer {
	buf, _ := r.buffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if contentLength > 0 && contentLength <= r.cfg.MaxRequestBodySize {
		buf.Grow(int(contentLength))
	}
	return buf
}

func (r *ddReceiver) putBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		r.buffers.Put(buf)
	}
}
