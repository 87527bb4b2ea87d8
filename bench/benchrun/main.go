// Command benchrun is `make bench`: it runs the load generator (bin/tracegen) against tracegate and
// a stock collector build, one protocol and delivery mode at a time, and writes the Datakit-style
// table with tracegate/stock ratios to docs/benchmarks.md and bench/results/pipeline.jsonl.
//
// Each run: the Elasticsearch stand-in in this process (counting only: sources are not parsed, optional latency per
// bulk), a fresh collector pinned to CPU 0 (taskset -c 0), tracegen pinned to CPU 1 with this
// process, the collector's CPU % (utime+stime from /proc/<pid>/stat) from the first request until
// the last span reached the stand-in, its peak RSS (VmHWM), and the end-to-end rate: spans in the
// stand-in divided by the time from the first request to the last span's arrival.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tracegate/tracegate/internal/testbed/collectorproc"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// Modes, in table order.
var allModes = []string{"nobuffer", "memory", "overflow", "write_ahead"}

// modeConfigs are the configuration files of each collector per mode (paths from the repository
// root). Stock has no overflow mode: its queue is in memory or on disk.
var modeConfigs = map[string]map[string]string{
	"tracegate": {
		"nobuffer":    "bench/configs/tracegate-nobuffer.yaml",
		"memory":      "bench/configs/tracegate-memory.yaml",
		"overflow":    "configs/default.yaml",
		"write_ahead": "configs/durable.yaml",
	},
	"stock": {
		"nobuffer":    "bench/configs/stock.yaml",
		"memory":      "bench/configs/stock-memory.yaml",
		"write_ahead": "bench/configs/stock-write_ahead.yaml",
	},
	// floor is bin/tracegate with receivers only: no pipeline behind them, nothing delivered. Its
	// latency is the floor of the harness itself (receiver, loopback, tracegen, one shared core),
	// measured once per protocol in the same run as the collectors it bounds.
	floorCollector: {floorMode: "bench/configs/floor.yaml"},
}

const (
	floorCollector = "floor"
	floorMode      = "none"
)

// stockSupports says whether the stock build accepts protocol (it has no ddtrace and no
// elasticapm receiver).
func stockSupports(protocol string) bool {
	return !strings.HasPrefix(protocol, "ddtrace") && protocol != loadgen.ElasticAPMIntake
}

type options struct {
	root                    string
	tracegate, stock, gen   string
	protocols, modes, colls []string
	conc, requests, spans   int
	rate                    float64
	duration                time.Duration
	esLatency, esJitter     time.Duration
	collectorCPU, clientCPU int
	stall, maxWait          time.Duration
	mdPath, jsonPath, label string
	quick, check, noWrite   bool
	warmup                  int
	sets                    []string // --set flags for the collectors
	command                 string
	// section is the heading of the Markdown section this run writes.
	section string
	// esDown: the stand-in refuses connections while the load runs and comes back after it.
	esDown bool
	// rateFraction > 0 offers each protocol this fraction of stock's saturation rate, read from the
	// report at saturationPath (stock's nobuffer row; ddtrace and elasticapm, which stock lacks: its
	// otlp-http row).
	rateFraction   float64
	saturationPath string
	saturation     *report
	// variants, from a sweep file, replace the collector x mode loop.
	variants []variant
	// profileDir, when set, receives a CPU profile of each collector taken while the load runs
	// (from its pprof extension), named <collector>-<mode>-<protocol>.pprof.
	profileDir     string
	profileSeconds int
	// collectorEnv is added to both collectors' environment (e.g. GOMAXPROCS=2).
	collectorEnv []string
	// featureGates is passed to every collector as --feature-gates (e.g. pdata.useProtoPooling).
	featureGates string
	// table is the runs table's format (report.Table).
	table string
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

// mainErr runs the benchmark the flags describe, or with -render only rewrites the report.
func mainErr() error {
	o, a, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		return err
	}
	if a.render {
		return renderSection(o)
	}
	if err := prepare(&o, a, os.Args[1:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := pinToClientCPU(o); err != nil {
		return err
	}
	rep, err := benchmark(ctx, o, reportWriter(o))
	if err != nil {
		return err
	}
	fmt.Print(rep.markdown())
	if !o.noWrite {
		fmt.Printf("\nwrote %s and %s\n", o.mdPath, o.jsonPath)
	}
	if !o.check {
		return nil
	}
	if bad := checkFailures(rep); len(bad) > 0 {
		return fmt.Errorf("check failed:\n  %s", strings.Join(bad, "\n  "))
	}
	fmt.Println("check: every expected span arrived in every run, and no other")
	return nil
}

// flagArgs are the flags read into options only once parsed (the lists, the sweep file) and the
// one that chooses to run nothing (-render).
type flagArgs struct {
	protocols, modes, colls, sweepPath string
	render                             bool
}

// parseFlags reads the command line args into options and flagArgs.
func parseFlags(fs *flag.FlagSet, args []string) (options, flagArgs, error) {
	var o options
	var a flagArgs
	addLoadFlags(fs, &o, &a)
	addCollectorFlags(fs, &o)
	addReportFlags(fs, &o, &a)
	if err := fs.Parse(args); err != nil {
		return o, a, err
	}
	if o.table != "" && o.table != tableDatakit && o.table != tableVariants {
		return o, a, fmt.Errorf("-table: want %q, %q or nothing, got %q", tableDatakit, tableVariants, o.table)
	}
	return o, a, nil
}

// addLoadFlags defines the flags of what each run measures: the protocols, modes and collectors,
// tracegen's load, and the stand-in's behaviour.
func addLoadFlags(fs *flag.FlagSet, o *options, a *flagArgs) {
	fs.StringVar(&a.protocols, "protocols", "all", "comma-separated protocols or all: "+strings.Join(loadgen.Protocols(), ","))
	fs.StringVar(&a.modes, "modes", strings.Join(allModes, ","), "comma-separated delivery modes")
	fs.StringVar(&a.colls, "collectors", "tracegate,stock", "collectors to run: tracegate, stock, and floor (tracegate's receivers with no pipeline: the harness's own latency floor, once per protocol)")
	fs.StringVar(&a.sweepPath, "sweep", "", "a sweep file (bench/configs/sweep.yaml): run its variants instead of collectors x modes")
	fs.IntVar(&o.conc, "c", 100, "client concurrency (Datakit: 100 threads)")
	fs.IntVar(&o.requests, "n", 1000, "requests per client (Datakit: 1000)")
	fs.IntVar(&o.spans, "spans", 10, "spans per request (Datakit: 10)")
	fs.Float64Var(&o.rate, "rate", 0, "fixed request rate per run (requests/s); 0: closed loop, as fast as the collector answers")
	fs.DurationVar(&o.duration, "duration", 0, "send for this long per run instead of -n requests per client")
	fs.BoolVar(&o.quick, "quick", false, "a quick run: 10 clients x 100 requests x 10 spans (overrides -c, -n, -spans)")
	fs.IntVar(&o.warmup, "warmup", 5, "warm-up requests per client before each measurement (0: none)")
	fs.Float64Var(&o.rateFraction, "rate-fraction", 0, "offer this fraction of stock's saturation rate per protocol (read from -saturation)")
	fs.StringVar(&o.saturationPath, "saturation", "bench/results/pipeline.jsonl", "report of a closed-loop run, for -rate-fraction")
	fs.DurationVar(&o.esLatency, "es-latency", 0, "latency the stand-in adds to every bulk request")
	fs.DurationVar(&o.esJitter, "es-jitter", 0, "up to this much more latency per bulk, at random")
	fs.BoolVar(&o.esDown, "es-down", false, "the stand-in refuses connections while the load runs, and comes back after it")
	fs.DurationVar(&o.stall, "stall", 20*time.Second, "give up waiting for spans after this long without a new one")
	fs.DurationVar(&o.maxWait, "max-wait", 5*time.Minute, "give up waiting for spans after this long in all")
}

// addCollectorFlags defines the flags of the binaries, the CPUs they are pinned to, and what the
// collectors are started with.
func addCollectorFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.root, "root", ".", "repository root (configs/ and bin/ are found from it)")
	fs.StringVar(&o.tracegate, "tracegate", "bin/tracegate", "tracegate binary")
	fs.StringVar(&o.stock, "stock", "bin/tracegate-stock", "stock collector binary (make build-stock)")
	fs.StringVar(&o.gen, "tracegen", "bin/tracegen", "load generator binary")
	fs.IntVar(&o.collectorCPU, "collector-cpu", 0, "CPU the collector is pinned to (taskset -c)")
	fs.IntVar(&o.clientCPU, "client-cpu", 1, "CPU tracegen and this process (the stand-in) are pinned to; -1: no pinning")
	fs.Func("set", "a collector setting, passed on as --set (repeatable), e.g. -set processors::batch::send_batch_size=4096", func(v string) error {
		o.sets = append(o.sets, v)
		return nil
	})
	fs.Func("collector-env", "KEY=VALUE added to the collectors' environment (repeatable), e.g. GOMAXPROCS=2", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		o.collectorEnv = append(o.collectorEnv, v)
		return nil
	})
	fs.StringVar(&o.featureGates, "feature-gates", "", "passed to every collector as --feature-gates, e.g. pdata.useProtoPooling")
	fs.StringVar(&o.profileDir, "profile", "", "write a CPU profile of each collector, taken while the load runs, into this directory")
	fs.IntVar(&o.profileSeconds, "profile-seconds", 10, "length of each -profile CPU profile")
}

// addReportFlags defines the flags of the report: where it goes, its notes and format, and the
// checks on its runs.
func addReportFlags(fs *flag.FlagSet, o *options, a *flagArgs) {
	fs.StringVar(&o.mdPath, "md", "docs/benchmarks.md", "Markdown report; only its \"## Pipeline benchmarks (make bench)\" section is replaced")
	fs.StringVar(&o.jsonPath, "json", "bench/results/pipeline.jsonl", "results file (JSON Lines: the report's header, then one line per run)")
	fs.StringVar(&o.label, "label", "", "a note printed with the results (e.g. why this run); with -render, it replaces the results file's note (e.g. what a profile of the run showed)")
	fs.BoolVar(&o.check, "check", false, "exit non-zero unless every request was acknowledged and every expected span (acknowledged, or of a kept trace under a sweep's keep_fraction) reached the stand-in in every run, and no span of a rejected trace")
	fs.BoolVar(&o.noWrite, "no-write", false, "print the table only; write neither report file")
	fs.StringVar(&o.section, "section", SectionHeading, "heading of the Markdown section to write (other sections are kept)")
	fs.StringVar(&o.table, "table", "", "the runs table's columns: every measure (default), or "+tableDatakit+": Datakit's report's (CPU, memory, requests, data sent, request size, latency), spans per core and the ratio to the variant's against:; or "+tableVariants+": a sweep's compact table, one row per variant, spans per core and the ratio per protocol, peak RSS")
	fs.BoolVar(&a.render, "render", false, "run nothing: rewrite the -section of -md from the -json results file (after a change to the report's format)")
}

// prepare completes o for a run from the parsed flags: the command recorded in the report, -quick,
// the lists, the sweep's variants and the saturation report.
func prepare(o *options, a flagArgs, args []string) error {
	o.command = "benchrun " + strings.Join(args, " ")
	if c := os.Getenv("BENCH_COMMAND"); c != "" {
		o.command = c
	}
	if o.quick {
		o.conc, o.requests, o.spans = 10, 100, 10
	}
	o.protocols = splitList(a.protocols, loadgen.Protocols())
	o.modes = splitList(a.modes, allModes)
	o.colls = splitList(a.colls, []string{"tracegate", "stock"})
	if a.sweepPath != "" {
		vs, err := loadSweep(fromRoot(o.root, a.sweepPath))
		if err != nil {
			return err
		}
		if err := checkVariantProtocols(vs, o.protocols); err != nil {
			return err
		}
		o.variants = vs
	}
	if o.rateFraction > 0 {
		sat, err := loadReport(fromRoot(o.root, o.saturationPath))
		if err != nil {
			return fmt.Errorf("-rate-fraction needs a saturation report: %w", err)
		}
		o.saturation = sat
	}
	return nil
}

// pinToClientCPU keeps this process, which hosts the stand-in, off the collector's CPU.
// SchedSetaffinity only pins the calling thread, so unless the whole process already runs on the
// client CPU alone, it starts again under taskset: every thread then inherits the mask.
func pinToClientCPU(o options) error {
	if o.clientCPU < 0 {
		return nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return err
	}
	if set.Count() == 1 && set.IsSet(o.clientCPU) {
		return nil
	}
	if os.Getenv("BENCHRUN_PINNED") != "" {
		return fmt.Errorf("could not pin this process to CPU %d", o.clientCPU)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return fmt.Errorf("taskset: %w (util-linux)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "BENCHRUN_PINNED=1", "BENCH_COMMAND="+o.command)
	return syscall.Exec(taskset, append([]string{"taskset", "-c", strconv.Itoa(o.clientCPU), self}, os.Args[1:]...), env)
}

// reportWriter saves the report files, rewritten after every run so that an interrupted benchmark
// keeps what it measured; with -no-write it saves nothing.
func reportWriter(o options) func(*report) error {
	return func(rep *report) error {
		if o.noWrite {
			return nil
		}
		if err := writeSection(fromRoot(o.root, o.mdPath), o.section, rep.markdown()); err != nil {
			return err
		}
		b, err := encodeResults(rep)
		if err != nil {
			return err
		}
		return os.WriteFile(fromRoot(o.root, o.jsonPath), b, 0o644)
	}
}

// checkFailures lists, for -check, each run that checkRun finds wrong, with its counts.
func checkFailures(rep *report) []string {
	var bad []string
	for _, r := range rep.Runs {
		if problem := checkRun(&r); problem != "" {
			bad = append(bad, fmt.Sprintf("%s/%s/%s %s: %s (sent %d, acknowledged %d, expected %d, in Elasticsearch %d)",
				r.Collector, r.Mode, r.Protocol, r.Variant, problem, r.Gen.SpansSent, r.Gen.SpansAcked, r.ExpectedSpans, r.SpansInES))
		}
	}
	return bad
}

// checkRun says what is wrong with a run for -check, "" when nothing: an error, a refused
// request, an expected span missing, or, in a run that expects the kept traces only, more spans
// than they hold (with every request acknowledged: a rejected trace was stored).
func checkRun(r *run) string {
	switch {
	case r.Collector == floorCollector:
		return "" // delivers nothing, by design
	case r.Error != "":
		first, _, _ := strings.Cut(r.Error, "\n")
		return first
	case r.Gen.SpansAcked < r.Gen.SpansSent:
		return "requests refused"
	case r.SpansInES < r.ExpectedSpans:
		return fmt.Sprintf("%d expected spans missing", r.ExpectedSpans-r.SpansInES)
	case r.expectsKeptOnly() && r.SpansInES+r.LateSpans > r.ExpectedSpans:
		return fmt.Sprintf("%d spans more than the kept traces hold: rejected traces were stored", r.SpansInES+r.LateSpans-r.ExpectedSpans)
	}
	return ""
}

// renderSection rewrites the Markdown section o.section from the results file o.jsonPath, which it
// leaves as it is unless o.label gives the report a new note or o.table a new table format.
func renderSection(o options) error {
	rep, err := loadReport(fromRoot(o.root, o.jsonPath))
	if err != nil {
		return err
	}
	rep.Section = o.section
	if o.table != "" {
		rep.Table = o.table
	}
	if o.label != "" || o.table != "" {
		rep.Label = cmp.Or(o.label, rep.Label)
		b, err := encodeResults(rep)
		if err != nil {
			return err
		}
		if err := os.WriteFile(fromRoot(o.root, o.jsonPath), b, 0o644); err != nil {
			return err
		}
	}
	if err := writeSection(fromRoot(o.root, o.mdPath), o.section, rep.markdown()); err != nil {
		return err
	}
	fmt.Printf("wrote %q of %s from %s\n", o.section, o.mdPath, o.jsonPath)
	return nil
}

// collectorFlags are the collector's command-line flags for --set values and feature gates.
func collectorFlags(sets []string, featureGates string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, "--set", s)
	}
	if featureGates != "" {
		out = append(out, "--feature-gates", featureGates)
	}
	return out
}

// fromRoot resolves a relative path against the repository root.
func fromRoot(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

func splitList(v string, all []string) []string {
	if v == "all" || v == "" {
		return all
	}
	return strings.Split(v, ",")
}

// benchmark runs every collector x mode x protocol and collects the results.
func benchmark(ctx context.Context, o options, save func(*report) error) (*report, error) {
	rep := newReport(o)
	es, err := esstandin.New(esstandin.Options{CountOnly: true})
	if err != nil {
		return nil, err
	}
	if err := es.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	// The stand-in's record file is flushed even when ctx is cancelled (Ctrl-C).
	defer func() { _ = es.Shutdown(context.WithoutCancel(ctx)) }()
	if err := es.SetFaults(esstandin.Faults{Latency: esstandin.Duration(o.esLatency), LatencyJitter: esstandin.Duration(o.esJitter)}); err != nil {
		return nil, err
	}
	for _, j := range jobs(o) {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		j.rate, j.rateErr = variantRate(rep, j, o.spans)
		fmt.Fprintf(os.Stderr, "== %s %s %s %s\n", j.coll, j.mode, j.protocol, j.variant.Name)
		r := runOne(ctx, o, es, j)
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "   error: %s\n", r.Error)
		}
		fmt.Fprintf(os.Stderr, "   %s\n", r.oneLine())
		rep.Runs = append(rep.Runs, r)
		if err := save(rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// run is one collector x mode x protocol measurement.
type run struct {
	Collector string `json:"collector"`
	Mode      string `json:"mode"`
	Protocol  string `json:"protocol"`
	Config    string `json:"config"`
	// Variant names the sweep variant; Settings are its --set flags.
	Variant  string   `json:"variant,omitempty"`
	Settings []string `json:"settings,omitempty"`
	Overlays []string `json:"overlays,omitempty"`
	// KeepFraction and Expect are the variant's (tracegen's -keep-fraction; "kept" or "all");
	// Against names the variant the report compares this run with.
	KeepFraction float64 `json:"keep_fraction,omitempty"`
	Expect       string  `json:"expect,omitempty"`
	Against      string  `json:"against,omitempty"`
	// Target is the variant's: "datakit" when tracegen sent to the datakit receiver's port.
	Target string `json:"target,omitempty"`
	// Kafka is the variant's Kafka tier (kafkaAgent, kafkaGateway, kafkaTiers). Sink is where
	// the run counted its spans when not in the stand-in: sinkKafka for an agent (SpansInES and
	// the rates are then spans in Kafka).
	Kafka string `json:"kafka,omitempty"`
	Sink  string `json:"sink,omitempty"`
	// PeerCPUPercent is the other collector's CPU over the same window: the gateway of a tiers
	// run.
	PeerCPUPercent float64 `json:"peer_cpu_percent,omitempty"`
	// StartCPUSeconds and SpansBeforeStart, in a gateway run, are the gateway's CPU until its
	// health check answered and the spans it had stored by then: its rates count from there.
	StartCPUSeconds  float64 `json:"start_cpu_s,omitempty"`
	SpansBeforeStart int     `json:"spans_before_start,omitempty"`
	// Delivery is the time from acknowledgement to the stand-in, with a variant's
	// delivery_latency.
	Delivery *delivery `json:"delivery,omitempty"`
	// ExpectedSpans is what the run waited for in Elasticsearch (expectedSpans). LateSpans arrived
	// in the lateWindow after it was reached, counted in runs that expect the kept traces only:
	// any is a rejected trace stored.
	ExpectedSpans int `json:"expected_spans"`
	LateSpans     int `json:"late_spans,omitempty"`
	// Rate is the offered request rate (requests/s); 0: closed loop.
	Rate float64 `json:"rate,omitempty"`
	// Gen is tracegen's own result: requests, bytes, latency, statuses.
	Gen loadgen.Result `json:"generator"`
	// CPUPercent is the collector's utime+stime over the wall time from the first request to the
	// last span's arrival (100 = one core busy).
	CPUPercent float64 `json:"collector_cpu_percent"`
	PeakRSSMB  float64 `json:"collector_peak_rss_mb"`
	// GenCPUPercent and StandinCPUPercent are tracegen's and this process's (the stand-in's) CPU
	// over the same window.
	GenCPUPercent     float64 `json:"tracegen_cpu_percent"`
	StandinCPUPercent float64 `json:"standin_cpu_percent"`
	// ClientLoadCPUPercent is the two together over the load alone (a long drain does not dilute
	// it): at clientBoundCPU or more, the client side, not the collector, limited the run.
	ClientLoadCPUPercent float64 `json:"client_load_cpu_percent"`
	SpansInES            int     `json:"spans_in_elasticsearch"`
	DuplicateSpans       int     `json:"duplicate_spans"`
	BulkRequests         int     `json:"bulk_requests"`
	// SpanDocBytes is the mean size of a span document as Elasticsearch received it: the bytes of
	// the source lines of the documents SpansInES counts (traces-*, not the span events in
	// logs-*), decompressed, over SpansInES; 0 when none arrived.
	SpanDocBytes float64 `json:"span_doc_bytes"`
	// LastSpanSeconds is the time from the first request until the last span arrived.
	LastSpanSeconds float64 `json:"last_span_s"`
	E2ESpansPerSec  float64 `json:"e2e_spans_per_s"`
	// SpansPerCoreSec is the end-to-end rate per collector core: E2ESpansPerSec / (CPUPercent/100),
	// the spans stored per second of the collector's CPU. AcceptedSpansPerCoreSec is the
	// acknowledged spans per second of the same CPU: what a core takes from clients, stored or not.
	SpansPerCoreSec         float64 `json:"spans_per_core_s"`
	AcceptedSpansPerCoreSec float64 `json:"accepted_spans_per_core_s"`
	// LoadSeconds is the load alone (tracegen's run); DrainSeconds what followed until the last
	// span arrived. A collector whose exporter holds a partial batch (stock's flushes after 10 s)
	// has a long drain, which lowers its e2e rate and CPU % without saying anything about its
	// speed under load: AcceptedSpansPerSec (acknowledged spans over the load) and LoadCPUPercent
	// (its CPU over the load) say that.
	LoadSeconds         float64 `json:"load_s"`
	DrainSeconds        float64 `json:"drain_s"`
	AcceptedSpansPerSec float64 `json:"accepted_spans_per_s"`
	LoadCPUPercent      float64 `json:"load_cpu_percent"`
	Error               string  `json:"error,omitempty"`
}

// clientBoundCPU is the client side's CPU % over the load from which a run measured the client
// (tracegen and the stand-in on their one core) rather than the collector. Found the hard way: a
// slow stand-in made the collector's buffer fill and refuse, as a slow Elasticsearch would.
const clientBoundCPU = 90

// clientBound reports whether the client side limited the run.
func (r *run) clientBound() bool { return r.ClientLoadCPUPercent >= clientBoundCPU }

// expectsKeptOnly reports whether the run's load carried a keep fraction that the collector was
// expected to honour.
func (r *run) expectsKeptOnly() bool { return r.KeepFraction > 0 && r.Expect != expectAll }

// lateWindow is how long a run that expects the kept traces only keeps counting after they all
// arrived: longer than the buffer's batch wait, so a rejected trace stored behind them shows.
const lateWindow = time.Second

func (r *run) oneLine() string {
	bound := ""
	if r.clientBound() {
		bound = fmt.Sprintf("; CLIENT-BOUND (client CPU %.0f%% over the load): this run measured the client side, not the collector", r.ClientLoadCPUPercent)
	}
	where := "ES"
	if r.Sink == sinkKafka {
		where = "Kafka"
	}
	return fmt.Sprintf("%d/%d spans in %s (%.0f bytes per span document), %.0f spans/s e2e, CPU %.0f%%, RSS %.0f MB, p50 %.2f ms p99 %.2f ms (2xx %.2f ms), 2xx %d 429 %d 5xx %d other %d transport %d missed %d, last span %.1fs; load %.1fs: %.0f spans/s accepted, CPU %.0f%%; drain %.1fs",
		r.SpansInES, r.Gen.SpansSent, where, r.SpanDocBytes, r.E2ESpansPerSec, r.CPUPercent, r.PeakRSSMB, r.Gen.Latency.P50, r.Gen.Latency.P99, r.Gen.LatencyOK.P99,
		r.Gen.Status.OK, r.Gen.Status.TooMany, r.Gen.Status.Server, r.Gen.Status.Other, r.Gen.Status.Transport, r.Gen.Status.Missed, r.LastSpanSeconds,
		r.LoadSeconds, r.AcceptedSpansPerSec, r.LoadCPUPercent, r.DrainSeconds) + bound
}

// profileName names a run's CPU profile: collector, mode, protocol, and the variant in letters,
// digits and dashes, so that the variants of a sweep do not overwrite each other's.
func profileName(r *run) string {
	name := fmt.Sprintf("%s-%s-%s", r.Collector, r.Mode, r.Protocol)
	if r.Variant == "" {
		return name
	}
	var b strings.Builder
	dash := true
	for _, c := range strings.ToLower(r.Variant) {
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') {
			b.WriteRune(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return name + "-" + strings.TrimSuffix(b.String(), "-")
}

// underRoot resolves a path given on the command line: relative to the repository root, unless
// it is absolute (filepath.Join would make "/tmp/x" relative).
func underRoot(root, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}

// cpuProfile saves a CPU profile of seconds from the collector's pprof extension at addr, starting
// one second into the load so that connection set-up is not in it.
func cpuProfile(ctx context.Context, addr string, seconds int, path string) error {
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	return fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds), path)
}

// fetch saves what url answers into path.
func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// genArgsWith returns args with flag's value replaced (flags of the form -name value). With a
// taskset prefix (-c CPU binary ...), the prefix is kept as it is.
func genArgsWith(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := len(out) - 2; i >= 0; i-- {
		if out[i] == flag {
			out[i+1] = value
			return out
		}
	}
	return append(out, flag, value)
}

// withoutFlag returns args without flag and its value (flags of the form -name value).
func withoutFlag(args []string, flag string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag && i+1 < len(args) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func spansIn(st esstandin.Stats) int {
	n := 0
	for _, c := range st.SpansByService {
		n += c
	}
	return n
}

// target is the address tracegen sends protocol to: its receiver's, or with to "datakit" the
// datakit receiver's.
func target(l collectorproc.Listeners, protocol, to string) string {
	if to == targetDatakit {
		return l.Datakit
	}
	switch protocol {
	case loadgen.OTLPGRPC:
		return l.OTLPGRPC
	case loadgen.OTLPHTTP:
		return l.OTLPHTTP
	case loadgen.ZipkinJSON, loadgen.ZipkinProto:
		return l.Zipkin
	case loadgen.JaegerThriftHTTP:
		return l.JaegerThriftHTTP
	case loadgen.JaegerUDPCompact:
		return l.JaegerCompact
	case loadgen.ElasticAPMIntake:
		return l.ElasticAPM
	default:
		return l.DDTrace
	}
}

// configArgs are the collector's --config flags: the mode's configuration, the variant's
// overlays, then the ports overlay (last, so that it wins).
func configArgs(root, cfg string, overlays []string, portsPath string) []string {
	args := []string{"--config", filepath.Join(root, cfg)}
	for _, ov := range overlays {
		args = append(args, "--config", filepath.Join(root, ov))
	}
	return append(args, "--config", portsPath)
}

// overlayFor moves every listener of coll's configuration cfg to a free loopback port.
func overlayFor(coll, cfg string) (collectorproc.Listeners, []byte, error) {
	// configs/default.yaml and configs/durable.yaml also have Jaeger's thrift_binary and zpages;
	// the bench configs leave them out. Only the stock build lacks tracegate's own receivers.
	full := strings.HasPrefix(cfg, "configs/")
	ours := coll != "stock"
	return collectorproc.PickListeners(collectorproc.ListenerOptions{DDTrace: ours, ElasticAPM: ours, Datakit: ours, JaegerBinary: full, ZPages: full})
}
