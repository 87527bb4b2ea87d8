package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

func parseTestFlags(t *testing.T, args ...string) (options, flagArgs, error) {
	t.Helper()
	fs := flag.NewFlagSet("benchrun", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return parseFlags(fs, args)
}

// TestParseFlagsDefaults: without flags, a run is Datakit's load (100 clients x 1000 requests x
// 10 spans) over every protocol, mode and both collectors, written to the pipeline report.
func TestParseFlagsDefaults(t *testing.T) {
	o, a, err := parseTestFlags(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.conc != 100 || o.requests != 1000 || o.spans != 10 || o.warmup != 5 || o.clientCPU != 1 || o.collectorCPU != 0 {
		t.Errorf("load %d x %d x %d, warm-up %d, CPUs %d/%d", o.conc, o.requests, o.spans, o.warmup, o.clientCPU, o.collectorCPU)
	}
	if o.stall != 20*time.Second || o.maxWait != 5*time.Minute || o.profileSeconds != 10 {
		t.Errorf("stall %v, max wait %v, profile %ds", o.stall, o.maxWait, o.profileSeconds)
	}
	if o.mdPath != "docs/benchmarks.md" || o.jsonPath != "bench/results/pipeline.jsonl" || o.section != SectionHeading || o.noWrite {
		t.Errorf("report to %s %s %q, no-write %v", o.mdPath, o.jsonPath, o.section, o.noWrite)
	}
	if a.protocols != "all" || a.modes != strings.Join(allModes, ",") || a.colls != "tracegate,stock" || a.sweepPath != "" || a.render {
		t.Errorf("flag args %+v", a)
	}
}

// TestParseFlags: every kind of flag lands in its field, repeatable ones accumulate, and a bad
// -table or -collector-env is refused.
func TestParseFlags(t *testing.T) {
	o, a, err := parseTestFlags(t, "-protocols", "otlp-http", "-collectors", "floor", "-duration", "5s", "-quick",
		"-no-write", "-set", "a=1", "-set", "b=2", "-collector-env", "GOMAXPROCS=2", "-table", tableDatakit,
		"-rate-fraction", "0.5", "-render")
	if err != nil {
		t.Fatal(err)
	}
	if a.protocols != "otlp-http" || a.colls != "floor" || !a.render || o.duration != 5*time.Second || !o.quick || !o.noWrite {
		t.Errorf("options %+v, flag args %+v", o, a)
	}
	if !slices.Equal(o.sets, []string{"a=1", "b=2"}) || !slices.Equal(o.collectorEnv, []string{"GOMAXPROCS=2"}) || o.table != tableDatakit || o.rateFraction != 0.5 {
		t.Errorf("sets %v, env %v, table %q, rate fraction %v", o.sets, o.collectorEnv, o.table, o.rateFraction)
	}
	for _, args := range [][]string{{"-table", "wide"}, {"-collector-env", "GOMAXPROCS"}, {"-no-such-flag"}} {
		if _, _, err := parseTestFlags(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestPrepare: -quick sets Datakit's quick load, the lists are split (all: every one), a sweep's
// variants are loaded and checked against the protocols, and the command is the one given, or
// BENCH_COMMAND's.
func TestPrepare(t *testing.T) {
	t.Setenv("BENCH_COMMAND", "")
	o := options{conc: 100, requests: 1000, spans: 20, quick: true}
	args := []string{"-quick", "-protocols", "otlp-http"}
	if err := prepare(&o, flagArgs{protocols: "all", modes: "memory,overflow", colls: "tracegate"}, args); err != nil {
		t.Fatal(err)
	}
	if o.conc != 10 || o.requests != 100 || o.spans != 10 || o.command != "benchrun -quick -protocols otlp-http" {
		t.Errorf("load %d x %d x %d, command %q", o.conc, o.requests, o.spans, o.command)
	}
	if !slices.Equal(o.protocols, loadgen.Protocols()) || !slices.Equal(o.modes, []string{"memory", "overflow"}) || !slices.Equal(o.colls, []string{"tracegate"}) {
		t.Errorf("protocols %v, modes %v, collectors %v", o.protocols, o.modes, o.colls)
	}

	t.Setenv("BENCH_COMMAND", "make bench-sampling")
	sweep := filepath.Join(t.TempDir(), "sweep.yaml") // absolute: not under -root
	const variants = `variants:
  - {name: "all", collector: tracegate, mode: memory}
  - {name: "kept", collector: tracegate, mode: memory, keep_fraction: 0.1, against: "all"}
`
	if err := os.WriteFile(sweep, []byte(variants), 0o600); err != nil {
		t.Fatal(err)
	}
	o = options{root: "/no/such/root"}
	if err := prepare(&o, flagArgs{protocols: "ddtrace-v0.4", sweepPath: sweep}, nil); err != nil {
		t.Fatal(err)
	}
	if len(o.variants) != 2 || o.variants[1].Expect != expectKept || o.command != "make bench-sampling" {
		t.Errorf("variants %+v, command %q", o.variants, o.command)
	}
	// A keep fraction needs a protocol that carries a sampling priority.
	if err := prepare(&options{}, flagArgs{protocols: "otlp-http", sweepPath: sweep}, nil); err == nil {
		t.Error("a sweep with a keep fraction accepted otlp-http")
	}
	if err := prepare(&options{root: t.TempDir(), rateFraction: 0.5, saturationPath: "report.jsonl"}, flagArgs{}, nil); err == nil {
		t.Error("-rate-fraction without a saturation report accepted")
	}
}

// TestCheckFailures: -check lists each failed run with its counts, and nothing for good runs.
func TestCheckFailures(t *testing.T) {
	good := run{Collector: "tracegate", Mode: "memory", Protocol: "otlp-http", Gen: loadgen.Result{SpansSent: 10, SpansAcked: 10}, ExpectedSpans: 10, SpansInES: 10}
	lost := good
	lost.Variant, lost.SpansInES = "v", 7
	got := checkFailures(&report{Runs: []run{good, lost, good}})
	want := []string{"tracegate/memory/otlp-http v: 3 expected spans missing (sent 10, acknowledged 10, expected 10, in Elasticsearch 7)"}
	if !slices.Equal(got, want) {
		t.Errorf("check failures %q, want %q", got, want)
	}
	if got := checkFailures(&report{Runs: []run{good}}); got != nil {
		t.Errorf("a good run failed the check: %q", got)
	}
}
