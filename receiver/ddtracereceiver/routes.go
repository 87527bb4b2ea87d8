// The agent's HTTP surface: which path goes to which handler, and the headers every reply carries.

package ddtracereceiver

import (
	"io"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// rateBody tells every tracer to keep 100% of its traces: the reply while rate_by_service is off.
var rateBody = []byte(`{"rate_by_service":{"service:,env:":1}}` + "\n")

var okBody = []byte("OK\n")

// endpoint is one trace intake route: the versions differ in body format and in reply.
type endpoint struct {
	name   string // the version label in telemetry, e.g. "v0.4"
	decode func(contentType string, body []byte) ([]payload.Payload, error)
	// decodeDropping, where set, is decode leaving out undecoded the chunks whose priority reject
	// refuses, for when nothing before the drop of rejected chunks reads them.
	decodeDropping func(contentType string, body []byte, reject func(int64) bool) ([]payload.Payload, payload.Skipped, error)
	rates          bool // reply with the rate body (v0.4 and later) rather than "OK"
	jsonOnly       bool // legacy routes refuse msgpack with 415
	// forwarded: chunks another Datadog Agent sampled and sent on; not counted for rate_by_service.
	forwarded bool
	attrs     endpointAttrs
}

// endpointAttrs are the telemetry attribute sets every accepted request of an endpoint records,
// made once: a set built per measurement is sorted, hashed and allocated on every request (three
// of them were 9 of a request's 172 allocations, and 0.5 µs per span in a profile).
type endpointAttrs struct {
	endpoint metric.MeasurementOption // endpoint
	ok       metric.MeasurementOption // endpoint, http.response.status_code 200
}

func newEndpointAttrs(name string) endpointAttrs {
	ep := attribute.String("endpoint", name)
	return endpointAttrs{
		endpoint: metric.WithAttributeSet(attribute.NewSet(ep)),
		ok:       metric.WithAttributeSet(attribute.NewSet(ep, semconv.HTTPResponseStatusCode(http.StatusOK))),
	}
}

// traceEndpoints are the trace intake routes and how each decodes its body.
func traceEndpoints() map[string]endpoint {
	eps := map[string]endpoint{
		"/v0.1/spans":      {name: "v0.1", decode: decodeSpansJSON, jsonOnly: true},
		"/v0.2/traces":     {name: "v0.2", decode: decodeByMediaType, jsonOnly: true},
		"/v0.3/traces":     {name: "v0.3", decode: decodeByMediaType, decodeDropping: decodeByMediaTypeDropping},
		"/v0.4/traces":     {name: "v0.4", decode: decodeByMediaType, decodeDropping: decodeByMediaTypeDropping, rates: true},
		"/v0.5/traces":     {name: "v0.5", decode: single(payload.DecodeV05), rates: true},
		"/v0.7/traces":     {name: "v0.7", decode: single(payload.DecodeV07), rates: true},
		"/api/v0.2/traces": {name: "api-v0.2", decode: decodeAgentPayload, forwarded: true},
	}
	for path, ep := range eps {
		ep.attrs = newEndpointAttrs(ep.name)
		eps[path] = ep
	}
	return eps
}

func (r *ddReceiver) handler() http.Handler {
	mux := http.NewServeMux()
	for path, ep := range traceEndpoints() {
		mux.Handle(path, r.tracesHandler(ep))
	}
	// Routes whose body tracegate does not store: legacy service lists, instrumentation telemetry
	// (the agent proxies it to Datadog) and DogStatsD over HTTP (dd-trace-js posts its own metrics
	// there at exit, whatever /info says). Answered as the agent does, so tracers do not log errors.
	mux.Handle("/v0.3/services", r.discardHandler("v0.3-services", http.StatusOK, okBody))
	mux.Handle("/v0.4/services", r.discardHandler("v0.4-services", http.StatusOK, okBody))
	mux.Handle("/telemetry/proxy/", r.discardHandler("telemetry", http.StatusAccepted, nil))
	mux.Handle("/dogstatsd/v1/proxy", r.discardHandler("dogstatsd", http.StatusOK, nil))
	mux.Handle("/dogstatsd/v2/proxy", r.discardHandler("dogstatsd", http.StatusOK, nil))
	mux.HandleFunc("/info", r.serveInfo)
	return mux
}

// discardHandler drains the body (so the connection is reused), answers status and body, and
// counts the request under name.
func (r *ddReceiver) discardHandler(name string, status int, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.agentHeaders(w)
		drain(req.Body)
		w.WriteHeader(status)
		_, _ = w.Write(body)
		r.telemetry.ReceiverDdtraceRequests.Add(req.Context(), 1, metric.WithAttributes(
			attribute.String("endpoint", name), semconv.HTTPResponseStatusCode(status),
		))
	})
}

func (r *ddReceiver) serveInfo(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	// libdatadog (the PHP sidecar, .NET, the native writers of Python and Ruby) reads the state
	// from /info's own reply and fails without it.
	w.Header().Set("Datadog-Agent-State", r.state)
	_, _ = w.Write(r.info)
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
