// Command ddgo-tail sends traces for a tail-sampling test to a Datadog trace intake with the real
// Go tracer, dd-trace-go v2: each trace is a server span with two children; -failing of them end a
// child with an error, -slow of them last 1.2 s (their timestamps set, not slept). It prints one
// JSON line per trace: its 128-bit id (32 lowercase hex digits), its span ids and its kind
// ("failing", "slow" or "plain").
//
//	ddgo-tail -agent-url http://127.0.0.1:8126 -service shop -traces 200 -failing 10 -slow 5
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/DataDog/dd-trace-go/v2/ddtrace/ext"
	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"

	"github.com/tracegate/tracegate/test/ddclients/internal/ddquiet"
)

// SentTrace is one line of output.
type SentTrace struct {
	TraceID string   `json:"trace_id"`
	SpanIDs []string `json:"span_ids"`
	Kind    string   `json:"kind"`
}

func main() {
	ddquiet.Apply("ddgo-tail")
	agentURL := flag.String("agent-url", os.Getenv("DD_TRACE_AGENT_URL"), "trace intake URL (default $DD_TRACE_AGENT_URL)")
	service := flag.String("service", ddquiet.EnvOr("DD_SERVICE", "ddgo-tail"), "service name (default $DD_SERVICE)")
	traces := flag.Int("traces", 200, "traces to send")
	failing := flag.Int("failing", 10, "of which with a failed span (the first ones)")
	slow := flag.Int("slow", 5, "of which lasting 1.2 s (after the failing ones)")
	flag.Parse()
	if *agentURL == "" || *failing+*slow > *traces {
		fmt.Fprintln(os.Stderr, "ddgo-tail: need -agent-url and -failing + -slow <= -traces")
		os.Exit(2)
	}
	if err := run(*agentURL, *service, *traces, *failing, *slow); err != nil {
		fmt.Fprintln(os.Stderr, "ddgo-tail:", err)
		os.Exit(1)
	}
}

func run(agentURL, service string, traces, failing, slow int) error {
	log := &ddquiet.Logger{}
	if err := tracer.Start(tracer.WithAgentURL(agentURL), tracer.WithService(service), tracer.WithLogger(log),
		tracer.WithLogStartup(false), tracer.WithStatsComputation(false), tracer.WithSendRetries(2)); err != nil {
		return fmt.Errorf("starting the tracer: %w", err)
	}
	sent := make([]SentTrace, 0, traces)
	for i := range traces {
		kind := "plain"
		switch {
		case i < failing:
			kind = "failing"
		case i < failing+slow:
			kind = "slow"
		}
		sent = append(sent, makeTrace(kind))
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

func makeTrace(kind string) SentTrace {
	duration := 20 * time.Millisecond
	if kind == "slow" {
		duration = 1200 * time.Millisecond
	}
	start := time.Now().Add(-duration)
	root := tracer.StartSpan("http.request", tracer.ResourceName("GET /orders"), tracer.SpanType(ext.SpanTypeWeb),
		tracer.StartTime(start), tracer.Tag(ext.SpanKind, ext.SpanKindServer))
	out := SentTrace{TraceID: root.Context().TraceID(), Kind: kind, SpanIDs: []string{hexID(root.Context().SpanID())}}
	for c := range 2 {
		child := root.StartChild("db.query", tracer.ResourceName("SELECT orders"), tracer.StartTime(start.Add(time.Millisecond)))
		var opts []tracer.FinishOption
		if kind == "failing" && c == 1 {
			opts = append(opts, tracer.WithError(errors.New("connection reset")))
		}
		child.Finish(append(opts, tracer.FinishTime(start.Add(2*time.Millisecond)))...)
		out.SpanIDs = append(out.SpanIDs, hexID(child.Context().SpanID()))
	}
	root.Finish(tracer.FinishTime(start.Add(duration)))
	return out
}

func hexID(id uint64) string { return fmt.Sprintf("%016x", id) }
