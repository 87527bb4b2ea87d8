package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ddRateTrace is one line of test/ddclients/cmd/ddgo-rates's output: a trace and the priority the
// tracer chose for it.
type ddRateTrace struct {
	Service  string `json:"service"`
	TraceID  string `json:"trace_id"`
	SpanID   string `json:"span_id"`
	Priority int    `json:"priority"`
	AtMS     int64  `json:"at_ms"`
}

// The traffic of TestDDTraceRateByService against a target of 5 traces/s
// (testdata/rate-by-service.yaml): the quiet service keeps its 1/s and leaves the busy one 4 of
// its 40, a rate of 0.1.
const (
	rateBusy, rateQuiet = "e2e-rates-busy", "e2e-rates-quiet"
	rateRun             = 25 * time.Second
	// After this the tracer holds the computed rates: the first reply (2 s, the tracer's flush)
	// lowers every rate to the default; the first complete 5 s bucket (by 7 s, replied by 9 s)
	// gives each service its own, and the quiet one's climbs back to 1 at most doubling a flush.
	rateSettled = 15 * time.Second
)

// TestDDTraceRateByService: dd-trace-go v2, with no sampling rule, samples by the rates tracegate
// computes with rate_by_service on. A service sending 40 traces/s gets priority 0 for most of
// its traces within seconds; one sending 1/s keeps priority 1; every stored root span carries
// the priority the tracer chose.
func TestDDTraceRateByService(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := buildDDGoProgram(ctx, t, "ddgo-rates")
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"../test/e2e/testdata/rate-by-service.yaml"}})

	cmd := exec.CommandContext(ctx, bin, "-busy", "40", "-quiet", "1", "-duration", rateRun.String(),
		"-busy-service", rateBusy, "-quiet-service", rateQuiet)
	cmd.Dir = ddclientsDir
	cmd.Env = withoutSampleRate(ddClientEnv("DD_TRACE_AGENT_URL=http://" + g.endpoints.DDTrace))
	traces := parseJSONLines[ddRateTrace](t, runDDProgram(t, cmd))

	busy, quiet := settledPriorities(traces, rateBusy), settledPriorities(traces, rateQuiet)
	t.Logf("after %s: %s priorities %v, %s priorities %v", rateSettled, rateBusy, busy, rateQuiet, quiet)
	if n := busy[0] + busy[1]; n < 300 || float64(busy[0]) < 0.7*float64(n) {
		t.Errorf("%s: %d of %d traces at priority 0, want at least 70 %% (rate about 0.1)", rateBusy, busy[0], n)
	}
	if quiet[1] < 8 || len(quiet) != 1 {
		t.Errorf("%s: priorities %v, want priority 1 only (its rate stays 1)", rateQuiet, quiet)
	}
	checkStoredPriorities(ctx, t, g, traces)
}

// withoutSampleRate drops DD_TRACE_SAMPLE_RATE: with it the tracer keeps every trace by rule
// (priority 2) and never applies the intake's rates.
func withoutSampleRate(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "DD_TRACE_SAMPLE_RATE=") })
}

// settledPriorities counts service's traces by priority, from rateSettled on.
func settledPriorities(traces []ddRateTrace, service string) map[int]int {
	n := map[int]int{}
	for _, tr := range traces {
		if tr.Service == service && tr.AtMS >= rateSettled.Milliseconds() {
			n[tr.Priority]++
		}
	}
	return n
}

// checkStoredPriorities waits for every trace the tracer kept (priority 1: no processor drops
// those) and checks that each stored root span says the priority the tracer chose. Traces at
// priority 0 may or may not be stored, as the pipeline's sampling decides.
func checkStoredPriorities(ctx context.Context, t *testing.T, g *gateway, traces []ddRateTrace) {
	t.Helper()
	byID := map[string]ddRateTrace{}
	kept := 0
	for _, tr := range traces {
		byID[tr.TraceID+"/"+tr.SpanID] = tr
		if tr.Priority == 1 {
			kept++
		}
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var stored map[string]any
	for {
		stored = storedPriorities(t, g, byID)
		found := 0
		for id := range stored {
			if byID[id].Priority == 1 {
				found++
			}
		}
		if found == kept {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of the %d traces kept by the tracer reached the stand-in", found, kept)
		case <-tick.C:
		}
	}
	for id, p := range stored {
		if want := strconv.Itoa(byID[id].Priority); fmt.Sprint(p) != want {
			t.Errorf("trace %s (%s): stored sampling.priority %v, the tracer chose %s", id, byID[id].Service, p, want)
		}
	}
	t.Logf("%d root spans stored; the tracer kept %d traces", len(stored), kept)
}

// storedPriorities is the sampling.priority attribute of each stored root span of the traces in
// byID, by trace and span id.
func storedPriorities(t *testing.T, g *gateway, byID map[string]ddRateTrace) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, d := range g.es.Documents() {
		if !strings.HasPrefix(d.Index, "traces-") {
			continue
		}
		var od otelDoc
		if err := json.Unmarshal(d.Source, &od); err != nil {
			t.Fatalf("document %s in %s: %v", d.ID, d.Index, err)
		}
		if id := od.TraceID + "/" + od.SpanID; byID[id].Service != "" {
			out[id] = od.Attributes["sampling.priority"]
		}
	}
	return out
}
