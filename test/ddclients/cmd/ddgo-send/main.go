// Command ddgo-send sends traces to a Datadog trace intake (a Datadog Agent, or tracegate's ddtrace
// receiver) with the real Go tracer, dd-trace-go v2, and prints what it sent as JSON lines, one per
// span, so a test can look for every span at the other end.
//
// Every trace is a server span ("http.request", as dd-trace-go's net/http integration names it) with
// a client child ("inventory.lookup") that finishes with an error. The process exits non-zero if
// the tracer logged an error (a payload the intake refused or could not take, an encoding error).
//
//	ddgo-send -agent-url http://127.0.0.1:8126 -service shop -traces 5
//
// Flags default to DD_TRACE_AGENT_URL and DD_SERVICE. Runtime metrics, telemetry, client-side stats,
// remote configuration and startup logs are switched off, so the tracer talks to the intake about
// traces only.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/DataDog/dd-trace-go/v2/ddtrace/ext"
	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"

	"github.com/tracegate/tracegate/test/ddclients/internal/ddquiet"
)

// SentSpan is one line of output: a span as the program made it. The test-side twin of this type
// (and of the Node program's output) is in test/e2e/ddtrace_clients_test.go.
type SentSpan struct {
	TraceID  string             `json:"trace_id"`  // 128-bit, 32 lowercase hex digits
	SpanID   string             `json:"span_id"`   // 16 lowercase hex digits
	ParentID string             `json:"parent_id"` // "" for a root span
	Name     string             `json:"name"`      // the Datadog operation name
	Resource string             `json:"resource"`
	Service  string             `json:"service"`
	Type     string             `json:"type"`
	Error    bool               `json:"error"`
	Meta     map[string]string  `json:"meta"`    // string tags the program set
	Metrics  map[string]float64 `json:"metrics"` // numeric tags the program set
}

func main() {
	ddquiet.Apply("ddgo-send")
	agentURL := flag.String("agent-url", os.Getenv("DD_TRACE_AGENT_URL"), "trace intake URL, e.g. http://127.0.0.1:8126 (default $DD_TRACE_AGENT_URL)")
	service := flag.String("service", ddquiet.EnvOr("DD_SERVICE", "ddgo-send"), "service name (default $DD_SERVICE)")
	traces := flag.Int("traces", 5, "number of traces to send")
	flag.Parse()
	if *agentURL == "" {
		fmt.Fprintln(os.Stderr, "ddgo-send: -agent-url or DD_TRACE_AGENT_URL is required")
		os.Exit(2)
	}
	if *traces < 1 {
		fmt.Fprintln(os.Stderr, "ddgo-send: -traces must be at least 1")
		os.Exit(2)
	}
	if err := run(*agentURL, *service, *traces); err != nil {
		fmt.Fprintln(os.Stderr, "ddgo-send:", err)
		os.Exit(1)
	}
}

func run(agentURL, service string, traces int) error {
	log := &ddquiet.Logger{}
	if err := tracer.Start(
		tracer.WithAgentURL(agentURL),
		tracer.WithService(service),
		tracer.WithLogger(log),
		tracer.WithLogStartup(false),
		tracer.WithStatsComputation(false),
		tracer.WithSendRetries(2),
	); err != nil {
		return fmt.Errorf("starting the tracer: %w", err)
	}

	var sent []SentSpan
	for i := range traces {
		sent = append(sent, makeTrace(service, i)...)
	}
	tracer.Stop() // flushes, and waits for the payload to be sent

	if errs := log.Errors(); len(errs) > 0 {
		return fmt.Errorf("the tracer logged %d error(s), first: %s", len(errs), errs[0])
	}
	enc := json.NewEncoder(os.Stdout)
	for _, s := range sent {
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return nil
}

// makeTrace creates, finishes and describes one trace of two spans.
func makeTrace(service string, i int) []SentSpan {
	start := time.Now()
	rootMeta := map[string]string{
		ext.SpanKind:       ext.SpanKindServer,
		ext.HTTPMethod:     "GET",
		ext.HTTPRoute:      "/items/{id}",
		ext.HTTPCode:       "200",
		"tracegate.client": "dd-trace-go",
	}
	rootMetrics := map[string]float64{"tracegate.test.index": float64(i)}
	root := tracer.StartSpan("http.request",
		tracer.ResourceName("GET /items/{id}"),
		tracer.SpanType(ext.SpanTypeWeb),
		tracer.StartTime(start),
		withTags(rootMeta, rootMetrics),
	)

	childMeta := map[string]string{
		ext.SpanKind:     ext.SpanKindClient,
		ext.PeerHostname: "inventory.internal",
		"inventory.sku":  fmt.Sprintf("sku-%d", i),
	}
	childMetrics := map[string]float64{"tracegate.retries": 2, "tracegate.ratio": 0.25}
	child := root.StartChild("inventory.lookup",
		tracer.ResourceName("lookup stock"),
		tracer.SpanType(ext.SpanTypeHTTP),
		tracer.StartTime(start.Add(time.Millisecond)),
		withTags(childMeta, childMetrics),
	)
	failure := fmt.Errorf("inventory unavailable for sku-%d", i)
	child.Finish(tracer.WithError(failure), tracer.FinishTime(start.Add(3*time.Millisecond)))
	root.Finish(tracer.FinishTime(start.Add(5 * time.Millisecond)))
	childMeta[ext.ErrorMsg] = failure.Error()

	traceID := root.Context().TraceID()
	return []SentSpan{
		{
			TraceID: traceID, SpanID: hexID(root.Context().SpanID()), Name: "http.request", Resource: "GET /items/{id}",
			Service: service, Type: ext.SpanTypeWeb, Meta: rootMeta, Metrics: rootMetrics,
		},
		{
			TraceID: child.Context().TraceID(), SpanID: hexID(child.Context().SpanID()), ParentID: hexID(root.Context().SpanID()),
			Name: "inventory.lookup", Resource: "lookup stock", Service: service, Type: ext.SpanTypeHTTP, Error: true,
			Meta: childMeta, Metrics: childMetrics,
		},
	}
}

func withTags(meta map[string]string, metrics map[string]float64) tracer.StartSpanOption {
	tags := make(map[string]any, len(meta)+len(metrics))
	for k, v := range meta {
		tags[k] = v
	}
	for k, v := range metrics {
		tags[k] = v
	}
	return tracer.WithTags(tags)
}

func hexID(id uint64) string { return fmt.Sprintf("%016x", id) }
