// Command ddgo-rates sends traces of two services at steady rates for a while with the real Go
// tracer, dd-trace-go v2, and no sampling rule, so that the tracer decides every trace by the
// rates the intake replies with (rate_by_service): priority 1 (keep) or 0 (drop). It prints one
// JSON line per trace, with the priority the tracer chose, so a test can see how the decisions
// follow the intake's rates over time.
//
//	ddgo-rates -agent-url http://127.0.0.1:8126 -busy 40 -quiet 1 -duration 25s
//
// Every trace is one server span ("http.request", resource "GET /items"). The process exits
// non-zero if the tracer logged an error.
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

// Sent is one line of output: a trace and the tracer's decision on it. The test-side twin of this
// type is in test/e2e/ddtrace_rates_test.go.
type Sent struct {
	Service  string `json:"service"`
	TraceID  string `json:"trace_id"` // 128-bit, 32 lowercase hex digits
	SpanID   string `json:"span_id"`  // the root's, 16 lowercase hex digits
	Priority int    `json:"priority"` // the sampling priority the tracer set
	AtMS     int64  `json:"at_ms"`    // when the trace started, in ms since the program began
}

// service is a service name and the traces it sends per second.
type service struct {
	name    string
	perSec  float64
	started int
}

func main() {
	ddquiet.ApplyAgentSampling("ddgo-rates")
	agentURL := flag.String("agent-url", os.Getenv("DD_TRACE_AGENT_URL"), "trace intake URL (default $DD_TRACE_AGENT_URL)")
	busy := flag.Float64("busy", 40, "traces per second of the busy service")
	quiet := flag.Float64("quiet", 1, "traces per second of the quiet service")
	busyName := flag.String("busy-service", "rates-busy", "name of the busy service")
	quietName := flag.String("quiet-service", "rates-quiet", "name of the quiet service")
	duration := flag.Duration("duration", 25*time.Second, "how long to send")
	flag.Parse()
	if *agentURL == "" {
		fmt.Fprintln(os.Stderr, "ddgo-rates: -agent-url or DD_TRACE_AGENT_URL is required")
		os.Exit(2)
	}
	services := []*service{{name: *busyName, perSec: *busy}, {name: *quietName, perSec: *quiet}}
	if err := run(*agentURL, services, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "ddgo-rates:", err)
		os.Exit(1)
	}
}

func run(agentURL string, services []*service, duration time.Duration) error {
	log := &ddquiet.Logger{}
	if err := tracer.Start(
		tracer.WithAgentURL(agentURL),
		tracer.WithLogger(log),
		tracer.WithLogStartup(false),
		tracer.WithStatsComputation(false),
	); err != nil {
		return fmt.Errorf("starting the tracer: %w", err)
	}
	var sent []Sent
	begin := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	for now := begin; now.Sub(begin) < duration; now = <-tick.C {
		// Paced by the clock: each service has started as many traces as its rate says by now.
		elapsed := now.Sub(begin).Seconds()
		for _, s := range services {
			for ; float64(s.started) < elapsed*s.perSec; s.started++ {
				sent = append(sent, startTrace(s.name, now.Sub(begin)))
			}
		}
	}
	tick.Stop()
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

// startTrace makes and finishes one trace of service and says what the tracer decided.
func startTrace(service string, at time.Duration) Sent {
	root := tracer.StartSpan("http.request",
		tracer.ServiceName(service),
		tracer.ResourceName("GET /items"),
		tracer.SpanType(ext.SpanTypeWeb),
		tracer.Tag(ext.SpanKind, ext.SpanKindServer),
	)
	prio, _ := root.Context().SamplingPriority()
	root.Finish()
	return Sent{
		Service: service, TraceID: root.Context().TraceID(), SpanID: fmt.Sprintf("%016x", root.Context().SpanID()),
		Priority: prio, AtMS: at.Milliseconds(),
	}
}
