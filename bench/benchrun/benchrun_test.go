package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tracegate/tracegate/internal/testbed/collectorproc"
	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

func TestParseStatTicks(t *testing.T) {
	tests := []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{"plain", "1234 (tracegate) S 1 1234 1234 0 -1 4194560 5000 0 0 0 250 75 0 0 20 0 9 0 100 0 0", 325, false},
		{"name with spaces and parens", "99 (my (odd) name) R 1 99 99 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 0 0", 10, false},
		{"truncated", "99 (x) R 1 2", 0, true},
		{"no parens", "garbage", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatTicks(tt.stat)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStatTicks = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseVmHWM(t *testing.T) {
	tests := []struct {
		name, status string
		want         uint64
		wantErr      bool
	}{
		{"present", "Name:\ttracegate\nVmPeak:\t 2000000 kB\nVmHWM:\t  587264 kB\nVmRSS:\t  500000 kB\n", 587264, false},
		{"missing", "Name:\tx\nVmRSS:\t 1 kB\n", 0, true},
		{"bad unit", "VmHWM:\t 12 MB\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseVMHWM(bufio.NewScanner(strings.NewReader(tt.status)))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseVMHWM = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestReplaceSection(t *testing.T) {
	sec := SectionHeading + "\n\nnew table\n"
	tests := []struct{ name, doc, want string }{
		{"empty file", "", "# Benchmarks\n\n" + sec},
		{"appended after other sections", "# Benchmarks\n\n## Go micro-benchmarks\n\nx\n", "# Benchmarks\n\n## Go micro-benchmarks\n\nx\n\n" + sec},
		{
			"replaced, later section kept", "# B\n\n" + SectionHeading + "\n\nold\nold\n\n## Go micro-benchmarks\n\nx\n",
			"# B\n\n" + sec + "\n## Go micro-benchmarks\n\nx\n",
		},
		{"replaced at the end, earlier section kept", "# B\n\n## Other\n\ny\n\n" + SectionHeading + "\n\nold\n", "# B\n\n## Other\n\ny\n\n" + sec},
		{"subsections belong to the section", "# B\n\n" + SectionHeading + "\n\nold\n\n### sweep\n\nold\n", "# B\n\n" + sec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replaceSection(tt.doc, SectionHeading, sec); got != tt.want {
				t.Errorf("replaceSection =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestOverlayMovesEveryListener checks the port overlay: stock gets no ddtrace receiver (it has
// none), the shipped configs get their extra listeners moved too, and every address is loopback.
func TestOverlayMovesEveryListener(t *testing.T) {
	tests := []struct {
		coll, cfg              string
		wantDDTrace, wantExtra bool
	}{
		{"tracegate", "configs/default.yaml", true, true},
		{"tracegate", "bench/configs/tracegate-memory.yaml", true, false},
		{"stock", "bench/configs/stock.yaml", false, false},
		{floorCollector, "bench/configs/floor.yaml", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.coll+" "+tt.cfg, func(t *testing.T) {
			ports, b, err := overlayFor(tt.coll, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Receivers  map[string]json.RawMessage `json:"receivers"`
				Extensions map[string]json.RawMessage `json:"extensions"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			_, dd := m.Receivers["ddtrace"]
			_, zp := m.Extensions["zpages"]
			if dd != tt.wantDDTrace || zp != tt.wantExtra || strings.Contains(string(b), "thrift_binary") != tt.wantExtra {
				t.Errorf("overlay %s", b)
			}
			if strings.Contains(string(b), "0.0.0.0") || target(ports, "otlp-http", "") == "" || ports.Health == "" || (target(ports, "ddtrace-v0.4", "") != "") != tt.wantDDTrace {
				t.Errorf("overlay %s, ports %+v", b, ports)
			}
		})
	}
}

// TestBenchConfigsFollowDefault: the memory mode measures configs/default.yaml without the disk,
// so its processors, pipeline, exporter and internal-traces setting must stay those of
// default.yaml (credentials aside); the floor measures its receivers with the same telemetry.
func TestBenchConfigsFollowDefault(t *testing.T) {
	load := func(path string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return m
	}
	get := func(m map[string]any, keys ...string) any {
		var v any = m
		for _, k := range keys {
			mm, _ := v.(map[string]any)
			v = mm[k]
		}
		return v
	}
	def, mem, floor := load("configs/default.yaml"), load("bench/configs/tracegate-memory.yaml"), load("bench/configs/floor.yaml")
	defBuffer := maps.Clone(get(def, "processors", "buffer").(map[string]any))
	delete(defBuffer, "storage")
	defES := maps.Clone(get(def, "exporters", "elasticsearch").(map[string]any))
	// Credentials and the cluster's CA are the deployment's, not what is measured.
	for _, k := range []string{"api_key", "user", "password", "tls"} {
		delete(defES, k)
	}
	for _, c := range []struct {
		name     string
		def, mem any
	}{
		{"processors::buffer (without storage)", defBuffer, get(mem, "processors", "buffer")},
		{"processors::memory_limiter", get(def, "processors", "memory_limiter"), get(mem, "processors", "memory_limiter")},
		{"processors::elasticmapping", get(def, "processors", "elasticmapping"), get(mem, "processors", "elasticmapping")},
		{"processors::tracesampling", get(def, "processors", "tracesampling"), get(mem, "processors", "tracesampling")},
		{"receivers::ddtrace::drop_rejected_chunks", get(def, "receivers", "ddtrace", "drop_rejected_chunks"), get(mem, "receivers", "ddtrace", "drop_rejected_chunks")},
		{"receivers::datakit::ddtrace", get(def, "receivers", "datakit", "ddtrace"), get(mem, "receivers", "datakit", "ddtrace")},
		{"exporters::elasticsearch (without credentials)", defES, get(mem, "exporters", "elasticsearch")},
		{"the traces pipeline's processors", get(def, "service", "pipelines", "traces", "processors"), get(mem, "service", "pipelines", "traces", "processors")},
		// Recording the collector's own traces cost the HTTP receivers up to a quarter of their throughput
		// (docs/design.md).
		{"service::telemetry::traces", get(def, "service", "telemetry", "traces"), get(mem, "service", "telemetry", "traces")},
		{"service::telemetry::traces (floor)", get(def, "service", "telemetry", "traces"), get(floor, "service", "telemetry", "traces")},
	} {
		if !reflect.DeepEqual(c.def, c.mem) {
			t.Errorf("%s differs:\n default.yaml:         %v\n bench memory config: %v", c.name, c.def, c.mem)
		}
	}
}

// TestSweepFile: the committed sweep files name only collectors and modes the runner has, and
// every variant becomes one job per protocol.
func TestSweepFile(t *testing.T) {
	for _, file := range []string{"sweep.yaml", "durability.yaml", "memory.yaml", "apm.yaml", "document-ids.yaml", "sampling.yaml", "datakit.yaml", "kafka.yaml", "tail.yaml"} {
		vs, err := loadSweep(filepath.Join("..", "configs", file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		o := options{protocols: []string{"otlp-grpc", "ddtrace-v0.4"}, variants: vs}
		stockVariants := 0
		for _, v := range vs {
			if v.Collector == "stock" {
				stockVariants++
			}
		}
		// ddtrace: stock variants are left out.
		if got, want := len(jobs(o)), 2*len(vs)-stockVariants; got != want {
			t.Errorf("%s: %d jobs, want %d", file, got, want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	for _, body := range []string{
		"variants: []",
		"variants: [{name: x, collector: stock, mode: overflow}]",
		"variants: [{collector: tracegate, mode: memory}]",
		"variants: [{name: x, collector: tracegate, mode: memory, sets: []}]",
		"variants: [{name: x, collector: tracegate, mode: memory, keep_fraction: 1.5}]",
		"variants: [{name: x, collector: tracegate, mode: memory, keep_fraction: -0.1}]",
		"variants: [{name: x, collector: tracegate, mode: memory, expect: all}]",
		"variants: [{name: x, collector: tracegate, mode: memory, keep_fraction: 0.1, expect: some}]",
		"variants: [{name: x, collector: tracegate, mode: memory, against: y}]",
		"variants: [{name: x, collector: tracegate, mode: memory, against: x}]",
		"variants: [{name: x, collector: tracegate, mode: memory, target: jaeger}]",
		"variants: [{name: x, collector: stock, mode: memory, target: datakit}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, kafka: broker}]",
		"variants: [{name: x, collector: stock, mode: memory, kafka: agent}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, kafka: gateway, overlays: [configs/elasticsearch/apm.yaml]}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, kafka: agent, keep_fraction: 0.1}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, kafka: agent, delivery_latency: true}]",
		"variants: [{name: x, collector: tracegate, mode: overflow}, {name: y, collector: tracegate, mode: overflow, rate_of: x}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, rate_fraction: 0.5}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, settle: soon}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, settle: -1s}]",
		"variants: [{name: x, collector: tracegate, mode: memory, settle: 5s, keep_fraction: 0.1}]",
		"variants: [{name: x, collector: tracegate, mode: overflow, rate_of: y, rate_fraction: 0.5}, {name: y, collector: tracegate, mode: overflow}]",
		"variants: [{name: x, collector: tracegate, mode: overflow}, {name: y, collector: tracegate, mode: overflow, rate_of: x, rate_fraction: 2}]",
	} {
		if err := os.WriteFile(bad, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadSweep(bad); err == nil {
			t.Errorf("%q accepted", body)
		}
	}
}

// TestJobsWithFloor: the floor runs once per protocol, in table order beside the first mode's
// runs, whatever the modes; stock still skips ddtrace.
func TestJobsWithFloor(t *testing.T) {
	o := options{modes: []string{"nobuffer", "memory"}, protocols: []string{"otlp-grpc", "ddtrace-v0.4"}, colls: []string{"tracegate", "stock", floorCollector}}
	var got []string
	for _, j := range jobs(o) {
		got = append(got, j.coll+"/"+j.mode+"/"+j.protocol+"/"+j.cfg)
	}
	want := []string{
		"tracegate/nobuffer/otlp-grpc/bench/configs/tracegate-nobuffer.yaml",
		"stock/nobuffer/otlp-grpc/bench/configs/stock.yaml",
		"floor/none/otlp-grpc/bench/configs/floor.yaml",
		"tracegate/nobuffer/ddtrace-v0.4/bench/configs/tracegate-nobuffer.yaml",
		"floor/none/ddtrace-v0.4/bench/configs/floor.yaml",
		"tracegate/memory/otlp-grpc/bench/configs/tracegate-memory.yaml",
		"stock/memory/otlp-grpc/bench/configs/stock-memory.yaml",
		"tracegate/memory/ddtrace-v0.4/bench/configs/tracegate-memory.yaml",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFloorInReport: the floor's row says nothing was delivered, and the latency table subtracts
// the floor of the same protocol from every other run.
func TestFloorInReport(t *testing.T) {
	lat := func(p50, p99 float64) loadgen.Result {
		var g loadgen.Result
		g.Latency.P50, g.Latency.P99 = p50, p99
		return g
	}
	r := &report{Section: "## x", Runs: []run{
		{Collector: "tracegate", Mode: "memory", Protocol: "otlp-grpc", Gen: lat(1.5, 9)},
		{Collector: "stock", Mode: "memory", Protocol: "otlp-grpc", Gen: lat(2, 12.5)},
		{Collector: floorCollector, Mode: floorMode, Protocol: "otlp-grpc", Gen: lat(1, 3)},
		{Collector: "tracegate", Mode: "memory", Protocol: "zipkin-json", Gen: lat(1, 5)}, // no floor for zipkin
	}}
	md := r.markdown()
	for _, want := range []string{
		"| otlp-grpc | none | floor |",
		"| otlp-grpc | none | floor | 1.00 | 3.00 | not delivered | – |",
		"The same in every run: offered req/s: max;",
		"| otlp-grpc | memory | tracegate | 1.00 | 3.00 | 9.00 | +0.50 | +6.00 |",
		"| otlp-grpc | memory | stock | 1.00 | 3.00 | 12.50 | +1.00 | +9.50 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if _, floor, _ := strings.Cut(md, "Latency over the floor"); strings.Contains(floor, "| zipkin-json |") {
		t.Errorf("zipkin has no floor run but got a floor row:\n%s", md)
	}
	if (&report{Section: "## x", Runs: r.Runs[:2]}).floorTable() != "" {
		t.Error("a floor table without floor runs")
	}
}

func TestHalfRate(t *testing.T) {
	sat := &report{Spans: 10, Runs: []run{
		{Collector: "stock", Mode: "nobuffer", Protocol: "otlp-http", E2ESpansPerSec: 20000},
		{Collector: "stock", Mode: "nobuffer", Protocol: "zipkin-json", E2ESpansPerSec: 8000, Rate: 400},
		{Collector: "tracegate", Mode: "nobuffer", Protocol: "otlp-grpc", E2ESpansPerSec: 30000},
	}}
	tests := []struct {
		protocol string
		want     float64
		wantErr  bool
	}{
		{"otlp-http", 1000, false},    // 0.5 x 20000 spans/s / 10 spans per request
		{"ddtrace-v0.4", 1000, false}, // stock has no ddtrace: its otlp-http rate
		{"zipkin-json", 0, true},      // not a closed-loop run
		{"otlp-grpc", 0, true},        // no stock run
	}
	for _, tt := range tests {
		got, err := halfRate(sat, tt.protocol, 0.5)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: %v, %v; want %v (error %v)", tt.protocol, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestWarmUpArgs: the warm-up sends -n requests per client as fast as it can, whatever the
// measurement's -duration and -rate, with trace ids of its own and no acknowledgement log.
func TestWarmUpArgs(t *testing.T) {
	args := []string{"-c", "1", "bin/tracegen", "-protocol", "otlp-http", "-c", "100", "-n", "1000", "-seed", "7", "-duration", "30s", "-rate", "500", "-json", "-", "-acks", "/tmp/a"}
	got := strings.Join(warmUpArgs(args, 5), " ")
	want := "-c 1 bin/tracegen -protocol otlp-http -c 100 -n 5 -json -"
	if got != want {
		t.Errorf("warm-up args %q, want %q", got, want)
	}
}

func TestUnderRoot(t *testing.T) {
	for _, tt := range []struct{ root, path, want string }{
		{".", "bin/tracegate", "bin/tracegate"},
		{"/repo", "bin/tracegate", "/repo/bin/tracegate"},
		{"/repo", "/tmp/tracegate", "/tmp/tracegate"},
	} {
		if got := underRoot(tt.root, tt.path); got != tt.want {
			t.Errorf("underRoot(%q, %q) = %q, want %q", tt.root, tt.path, got, tt.want)
		}
	}
}

// TestSeparatorMatchesHeader: each table's alignment row has one cell per header cell.
func TestSeparatorMatchesHeader(t *testing.T) {
	for _, h := range []string{runsHeader, ratiosHeader, datakitHeader, meansHeader, deliveryHeader} {
		if got, want := strings.Count(separator(h, 2), "|"), strings.Count(h, "|"); got != want {
			t.Errorf("separator has %d bars, header %d: %s", got, want, h)
		}
	}
	if got := separator("| a | b | c |\n", 1); got != "|---|--:|--:|\n" {
		t.Errorf("separator %q", got)
	}
}

// TestClientBoundRunsAreMarked: a run whose client side (tracegen and the stand-in) used its core
// during the load measured the client, and says so in its line, its row and its ratios.
func TestClientBoundRunsAreMarked(t *testing.T) {
	r := &report{Section: "## x", Runs: []run{
		{Collector: "tracegate", Mode: "memory", Protocol: "otlp-grpc", ClientLoadCPUPercent: 96},
		{Collector: "stock", Mode: "memory", Protocol: "otlp-grpc", ClientLoadCPUPercent: 60},
		{Collector: "tracegate", Mode: "memory", Protocol: "zipkin-json", ClientLoadCPUPercent: 70},
		{Collector: "stock", Mode: "memory", Protocol: "zipkin-json", ClientLoadCPUPercent: 89},
	}}
	md := r.markdown()
	for _, want := range []string{"| 96 (bound) |", "| 60 |", "| otlp-grpc (client-bound) | memory |", "| zipkin-json | memory |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "zipkin-json (client-bound)") || strings.Contains(md, "| 89 (bound) |") {
		t.Errorf("a run below %d %% client CPU is marked:\n%s", clientBoundCPU, md)
	}
	if line := r.Runs[0].oneLine(); !strings.Contains(line, "CLIENT-BOUND") {
		t.Errorf("one-line summary of a client-bound run: %s", line)
	}
	if line := r.Runs[1].oneLine(); strings.Contains(line, "CLIENT-BOUND") {
		t.Errorf("one-line summary of a collector-bound run: %s", line)
	}
}

// TestSpanDocBytesInReport: the mean span document size has its column in the runs table ("–"
// where no span arrived) and its ratio beside the others, every row as wide as its header.
func TestSpanDocBytesInReport(t *testing.T) {
	r := &report{Section: "## x", Runs: []run{
		{Collector: "tracegate", Mode: "memory", Protocol: "otlp-grpc", SpansPerCoreSec: 12500, SpanDocBytes: 1100.4},
		{Collector: "stock", Mode: "memory", Protocol: "otlp-grpc", SpansPerCoreSec: 13000, SpanDocBytes: 1000},
		{Collector: "tracegate", Mode: "memory", Protocol: "otlp-http", SpansPerCoreSec: 2000, Error: "no span arrived"},
		{Collector: "stock", Mode: "memory", Protocol: "otlp-http", SpansPerCoreSec: 3000, SpanDocBytes: 1000},
	}}
	md := r.markdown()
	for _, want := range []string{"| 12500 | 1100 |", "| 13000 | 1000 |", "| 2000 | – |", "| 1.10 |\n", "| – |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	_, runs, _ := strings.Cut(md, "\n| protocol | mode | collector |")
	runs, _, _ = strings.Cut("| protocol | mode | collector |"+runs, "\n")
	runs += "\n"
	for _, header := range []string{runs, ratiosHeader} {
		cells := strings.Count(header, "|")
		_, table, _ := strings.Cut(md, header)
		for row := range strings.SplitSeq(table, "\n") {
			if !strings.HasPrefix(row, "|") {
				break
			}
			if n := strings.Count(row, "|"); n != cells {
				t.Errorf("row has %d bars, header %d: %s", n, cells, row)
			}
		}
	}
}

// TestReportLinesAreShort: docs/benchmarks.md allows no line over 600 characters (the docscheck
// test), so no line the report writes may be longer, whatever the run's settings and errors.
func TestReportLinesAreShort(t *testing.T) {
	g := loadgen.Result{}
	g.Status.Missed, g.Status.Transport = 123456, 654321
	r := &report{
		Section: "## Elasticsearch down during the load (make bench-es-down)", Results: "bench/results/es-down.jsonl",
		Command: "make bench-latency-2p BENCH_FLAGS='-modes memory -protocols otlp-grpc,otlp-http,zipkin-json,jaeger-thrift-http,ddtrace-v0.4'",
		Machine: "2 x AMD EPYC 7763 64-Core Processor (online CPUs 0-1)", LoadAvg: "1.07 1.18 1.18 2/85 3411", GoVersion: "go1.26.8",
		Duration: "30s", RateFraction: 0.5, ESDown: true, SaturationSource: "bench/results/pipeline.jsonl of 2026-12-01 12:44 UTC",
		CollectorEnv: []string{"GOMAXPROCS=2"}, Settings: []string{"processors::batch::send_batch_size=4096"},
		Runs: []run{
			{
				Collector: "tracegate", Mode: "memory", Protocol: "jaeger-thrift-http", Variant: "document ids on (default), third", Rate: 1535.5, Gen: g,
				CPUPercent: 99.9, PeakRSSMB: 1234.5, SpansInES: 1000000, SpansPerCoreSec: 123456, SpanDocBytes: 1444, AcceptedSpansPerSec: 123456,
				ClientLoadCPUPercent: 99, Error: "1 of 1000000 acknowledged spans reached the stand-in (gave up waiting)",
			},
			{Collector: "tracegate", Mode: "memory", Protocol: "otlp-grpc", Gen: g, ClientLoadCPUPercent: 99},
			{Collector: "stock", Mode: "memory", Protocol: "otlp-grpc", Gen: g},
			{Collector: floorCollector, Mode: floorMode, Protocol: "otlp-grpc", Gen: g},
		},
	}
	for i, line := range strings.Split(r.markdown(), "\n") {
		if n := len([]rune(line)); n > 600 {
			t.Errorf("line %d has %d characters: %s", i+1, n, line)
		}
	}
}

// TestSamplingSweep: the sampling sweep's variants store everything (the reference), drop the
// rejected chunks in tracesampling, or in the receiver (the default configuration), all under the
// same 10 % load, in one order and then the reverse, each compared with the reference of its
// round; a keep fraction is refused with a protocol that has no sampling priority.
func TestSamplingSweep(t *testing.T) {
	vs, err := loadSweep(filepath.Join("..", "configs", "sampling.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const (
		honourOff = "processors::tracesampling::datadog::honour_priority=false"
		earlyOff  = "receivers::ddtrace::drop_rejected_chunks=false"
	)
	want := []struct {
		name, against string
		set           []string
	}{
		{"store all", "", []string{honourOff, earlyOff}},
		{"tracesampling drops", "store all", []string{earlyOff}},
		{"receiver drops", "store all", nil},
		{"receiver drops, again", "store all, again", nil},
		{"tracesampling drops, again", "store all, again", []string{earlyOff}},
		{"store all, again", "", []string{honourOff, earlyOff}},
	}
	if len(vs) != len(want) {
		t.Fatalf("%d variants, want %d", len(vs), len(want))
	}
	for i, v := range vs {
		w := want[i]
		if v.KeepFraction != 0.1 || v.Collector != "tracegate" || v.Mode != "memory" {
			t.Errorf("variant %q: keep fraction %g, %s/%s", v.Name, v.KeepFraction, v.Collector, v.Mode)
		}
		expect := expectKept
		if w.against == "" {
			expect = expectAll
		}
		if v.Name != w.name || v.Against != w.against || v.Expect != expect || !slices.Equal(v.Set, w.set) {
			t.Errorf("variant %d: %q against %q, expect %q, settings %v; want %q against %q, expect %q, settings %v",
				i+1, v.Name, v.Against, v.Expect, v.Set, w.name, w.against, expect, w.set)
		}
	}
	if err := checkVariantProtocols(vs, []string{"ddtrace-v0.4", "ddtrace-v0.5"}); err != nil {
		t.Error(err)
	}
	if err := checkVariantProtocols(vs, []string{"ddtrace-v0.4", "otlp-http"}); err == nil || !strings.Contains(err.Error(), "otlp-http") {
		t.Errorf("otlp-http with a keep fraction: %v", err)
	}
}

// TestExpectedSpans: a run waits for every acknowledged span, for the kept traces' acknowledged
// spans when the load carries a keep fraction the collector honours, and for nothing from the
// floor.
func TestExpectedSpans(t *testing.T) {
	g := loadgen.Result{SpansSent: 1000, SpansAcked: 900, SpansKept: 110, SpansKeptAcked: 100, KeepFraction: 0.1}
	for _, tt := range []struct {
		name string
		coll string
		v    variant
		want int
	}{
		{"no sweep", "tracegate", variant{}, 900},
		{"keep fraction, kept expected", "tracegate", variant{KeepFraction: 0.1, Expect: expectKept}, 100},
		{"keep fraction, all expected", "tracegate", variant{KeepFraction: 0.1, Expect: expectAll}, 900},
		{"floor", floorCollector, variant{KeepFraction: 0.1, Expect: expectKept}, 0},
	} {
		if got := expectedSpans(tt.coll, tt.v, g); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestCheckRun: -check fails a run with an error, a refused request or an expected span missing,
// and a run that expects the kept traces only when more spans arrived than they hold, within the
// run or just after it; a run that expects every span may hold more (a resent copy).
func TestCheckRun(t *testing.T) {
	kept := func(inES, late int) *run {
		r := &run{Collector: "tracegate", KeepFraction: 0.1, Expect: expectKept, ExpectedSpans: 100, SpansInES: inES, LateSpans: late}
		r.Gen.SpansSent, r.Gen.SpansAcked, r.Gen.SpansKeptAcked = 1000, 1000, 100
		return r
	}
	all := func(inES int) *run {
		r := &run{Collector: "tracegate", KeepFraction: 0.1, Expect: expectAll, ExpectedSpans: 1000, SpansInES: inES}
		r.Gen.SpansSent, r.Gen.SpansAcked = 1000, 1000
		return r
	}
	refused := all(1000)
	refused.Gen.SpansAcked, refused.ExpectedSpans = 990, 990
	failed := kept(100, 0)
	failed.Error = "stop: timeout\ncollector log (tail):\n..."
	floor := &run{Collector: floorCollector}
	floor.Gen.SpansSent, floor.Gen.SpansAcked = 1000, 1000
	for _, tt := range []struct {
		name string
		r    *run
		want string // a part of the problem; "" for none
	}{
		{"kept traces stored exactly", kept(100, 0), ""},
		{"a kept trace missing", kept(90, 0), "10 expected spans missing"},
		{"a rejected trace stored", kept(110, 0), "10 spans more than the kept traces hold"},
		{"a rejected trace stored late", kept(100, 10), "10 spans more than the kept traces hold"},
		{"every span stored", all(1000), ""},
		{"every span stored, and a copy", all(1001), ""},
		{"a span missing", all(999), "1 expected spans missing"},
		{"requests refused", refused, "requests refused"},
		{"an error", failed, "stop: timeout"},
		{"the floor stores nothing", floor, ""},
	} {
		got := checkRun(tt.r)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestComparisonTable: every variant's accepted and stored spans per core, its ratios to the
// variant it names, the geometric mean of a comparison's pairs, and no table without against:.
func TestComparisonTable(t *testing.T) {
	v := func(name, against string, accepted, stored, cpu float64) run {
		r := run{
			Collector: "tracegate", Mode: "memory", Protocol: "ddtrace-v0.4", Variant: name, Against: against,
			AcceptedSpansPerCoreSec: accepted, SpansPerCoreSec: stored, CPUPercent: cpu, PeakRSSMB: 100,
		}
		r.Gen.Latency.P99 = 10
		return r
	}
	r := &report{Section: "## x", Runs: []run{
		v("keep everything", "", 30000, 30000, 99),
		v("priority honoured", "keep everything", 120000, 12000, 80),
		v("keep everything, again", "", 40000, 40000, 99),
		v("priority honoured, again", "keep everything, again", 90000, 9000, 60),
	}}
	md := r.markdown()
	for _, want := range []string{
		"| ddtrace-v0.4 | keep everything | – | 30000 | 30000 | – | – | – | – | – |",
		"| ddtrace-v0.4 | priority honoured | keep everything | 120000 | 12000 | 4.00 | 0.40 | 0.81 | 1.00 | 1.00 |",
		"| ddtrace-v0.4 | priority honoured, again | keep everything, again | 90000 | 9000 | 2.25 | 0.23 | 0.61 | 1.00 | 1.00 |",
		// sqrt(4 x 2.25) = 3, sqrt(0.4 x 0.225) = 0.3
		"| ddtrace-v0.4 | priority honoured: geometric mean of 2 pairs | keep everything | | | 3.00 | 0.30 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	_, table, _ := strings.Cut(md, comparisonHeader)
	for row := range strings.SplitSeq(table, "\n") {
		if !strings.HasPrefix(row, "|") {
			break
		}
		if n, want := strings.Count(row, "|"), strings.Count(comparisonHeader, "|"); n != want {
			t.Errorf("row has %d bars, header %d: %s", n, want, row)
		}
	}
	for i := range r.Runs {
		r.Runs[i].Against = ""
	}
	if r.comparisonTable() != "" {
		t.Error("a comparison table without against:")
	}
}

// TestProfileNames: the variants of a sweep get profiles of their own.
func TestProfileNames(t *testing.T) {
	a := run{Collector: "tracegate", Mode: "memory", Protocol: "ddtrace-v0.4", Variant: "10 % kept, again"}
	b := run{Collector: "tracegate", Mode: "memory", Protocol: "ddtrace-v0.4", Variant: "keep everything"}
	if got := profileName(&a); got != "tracegate-memory-ddtrace-v0.4-10-kept-again" {
		t.Errorf("profile name %q", got)
	}
	if profileName(&a) == profileName(&b) {
		t.Error("two variants share a profile name")
	}
	if got := profileName(&run{Collector: "stock", Mode: "memory", Protocol: "otlp-grpc"}); got != "stock-memory-otlp-grpc" {
		t.Errorf("profile name without a variant %q", got)
	}
}

// TestRenderWithNote: -render rewrites the section from the results file, and -label gives the
// report a note that the section shows and the results file keeps for the next rendering.
func TestRenderWithNote(t *testing.T) {
	dir := t.TempDir()
	rep := &report{Section: "## Old heading", Results: "r.jsonl", Runs: []run{{Collector: "tracegate", Mode: "memory", Protocol: "otlp-grpc", SpansInES: 42}}}
	b, err := encodeResults(rep)
	if err != nil {
		t.Fatal(err)
	}
	md, results := filepath.Join(dir, "b.md"), filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(results, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(md, []byte("# B\n\n## x (make y)\n\nold\n\n## Later\n\nkept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := options{root: dir, mdPath: "b.md", jsonPath: "r.jsonl", section: "## x (make y)", label: "profile: 48 % exporter"}
	if err := renderSection(o); err != nil {
		t.Fatal(err)
	}
	o.label = ""
	if err := renderSection(o); err != nil { // the note stays: it is in the results file now
		t.Fatal(err)
	}
	got, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## x (make y)\n", "- Note: profile: 48 % exporter\n", "| 42 / 0 |", "## Later\n\nkept\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("rendered file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "old\n") || strings.Contains(string(got), "Old heading") {
		t.Errorf("the old section is left:\n%s", got)
	}
}

// TestErrorsBelowTheTable: a run that gave up waiting for spans shows as ⚠ with its count in the
// table and is not listed again below it; any other error is listed, its first line only.
func TestErrorsBelowTheTable(t *testing.T) {
	r := &report{Section: "## x", Runs: []run{
		{Collector: "tracegate", Mode: "memory", Protocol: "jaeger-udp-compact", SpansInES: 22650, Error: "22650 of 1000000 acknowledged spans " + gaveUp},
		{Collector: "stock", Mode: "memory", Protocol: "otlp-grpc", Error: "stop: timeout\ncollector log (tail):\nsecret detail"},
	}}
	r.Runs[0].Gen.SpansSent = 1000000
	md := r.markdown()
	for _, want := range []string{"| 22650 / 1000000 ⚠ |", "- ⚠ stock / memory / otlp-grpc: stop: timeout\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "gave up waiting") || strings.Contains(md, "secret detail") {
		t.Errorf("report repeats a gave-up run or an error's log:\n%s", md)
	}
}

// TestDatakitSweep: the Datakit sweep alternates the protocols' own receivers with the datakit
// receiver's port, each Datakit variant compared with a standard one of the same configuration,
// and refuses a protocol Datakit's port does not take.
func TestDatakitSweep(t *testing.T) {
	vs, err := loadSweep(filepath.Join("..", "configs", "datakit.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]variant{}
	for _, v := range vs {
		byName[v.Name] = v
	}
	datakit := 0
	for _, v := range vs {
		if v.Collector != "tracegate" || v.Mode != "memory" || len(v.Set) != 0 || len(v.Overlays) != 0 {
			t.Errorf("variant %q: %s/%s %v %v; want tracegate's memory mode as it is", v.Name, v.Collector, v.Mode, v.Set, v.Overlays)
		}
		if v.Target != targetDatakit {
			continue
		}
		datakit++
		if ref, ok := byName[v.Against]; !ok || ref.Target != "" {
			t.Errorf("variant %q is compared with %q (target %q); want a variant on the protocol's own port", v.Name, v.Against, ref.Target)
		}
	}
	if datakit < 2 || 2*datakit != len(vs) {
		t.Errorf("%d Datakit variants of %d; want half of them, at least two", datakit, len(vs))
	}
	protocols := []string{"ddtrace-v0.4", "jaeger-thrift-http", "zipkin-json", "otlp-http"}
	if err := checkVariantProtocols(vs, protocols); err != nil {
		t.Error(err)
	}
	if err := checkVariantProtocols(vs, []string{"otlp-http", "otlp-grpc"}); err == nil || !strings.Contains(err.Error(), "otlp-grpc") {
		t.Errorf("otlp-grpc to Datakit's port: %v", err)
	}
	// Every job of a protocol alternates the two ports.
	o := options{protocols: protocols, variants: vs}
	var targets []string
	for _, j := range jobs(o) {
		if j.protocol == "zipkin-json" {
			targets = append(targets, cmp.Or(j.variant.Target, "-"))
		}
	}
	if got := strings.Join(targets, " "); got != "- datakit datakit - - datakit" {
		t.Errorf("zipkin-json's jobs send to %q", got)
	}
}

// TestDatakitTarget: a variant for Datakit's port sends to the datakit receiver, whatever the
// protocol; the others to the protocol's own receiver.
func TestDatakitTarget(t *testing.T) {
	ports, _, err := overlayFor("tracegate", "bench/configs/tracegate-memory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ports.Datakit == "" {
		t.Fatal("no datakit receiver in tracegate's port overlay")
	}
	for _, p := range []string{"ddtrace-v0.4", "jaeger-thrift-http", "zipkin-json", "otlp-http"} {
		if got := target(ports, p, targetDatakit); got != ports.Datakit {
			t.Errorf("%s to Datakit's port: %s, want %s", p, got, ports.Datakit)
		}
		if got := target(ports, p, ""); got == ports.Datakit || got == "" {
			t.Errorf("%s to its own port: %s", p, got)
		}
	}
}

// TestDatakitTable: -table datakit prints Datakit's report's columns, one row per run with its
// ratio to the run it is compared with, and the geometric mean of each comparison's pairs.
func TestDatakitTable(t *testing.T) {
	v := func(name, against string, perCore float64) run {
		r := run{
			Collector: "tracegate", Mode: "memory", Protocol: "jaeger-thrift-http", Variant: name, Against: against,
			AcceptedSpansPerCoreSec: perCore, SpansPerCoreSec: perCore, CPUPercent: 99, PeakRSSMB: 80.4,
		}
		r.Gen.Requests, r.Gen.Status.OK, r.Gen.Bytes, r.Gen.BytesPerRequest = 100000, 100000, 511170000, 5111.7
		r.Gen.Latency.Mean, r.Gen.Latency.P99 = 24.904, 60
		return r
	}
	r := &report{Section: "## x", Table: tableDatakit, Runs: []run{
		v("standard port", "", 20000),
		v("Datakit port", "standard port", 19000),
		v("Datakit port, again", "standard port, again", 21000),
		v("standard port, again", "", 20000),
	}}
	r.Runs[3].Gen.Status.OK = 99990
	r.Runs[3].Error = "10 of 1000000 acknowledged spans " + gaveUp
	md := r.markdown()
	for _, want := range []string{
		"| jaeger-thrift-http | standard port | 99 | 80 | 100.00 | 511.2 | 5.11 | 24.90 | 60.00 | 20000 | – |",
		"| jaeger-thrift-http | Datakit port | 99 | 80 | 100.00 | 511.2 | 5.11 | 24.90 | 60.00 | 19000 | 0.95 |",
		"| jaeger-thrift-http | standard port, again | 99 | 80 | 100.00 (10 not 2xx) | 511.2 | 5.11 | 24.90 | 60.00 | 20000 ⚠ | – |",
		// The failed pair is left out of the mean.
		"| jaeger-thrift-http | Datakit port | standard port | 1 | 0.95 | 0.95 | 1.00 | 1.00 | 1.00 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, runsHeader) || strings.Contains(md, comparisonHeader) {
		t.Errorf("the Datakit table comes with the full tables:\n%s", md)
	}
	for _, header := range []string{datakitHeader, meansHeader} {
		_, table, ok := strings.Cut(md, header)
		if !ok {
			t.Fatalf("no %q in:\n%s", header, md)
		}
		for row := range strings.SplitSeq(table, "\n") {
			if !strings.HasPrefix(row, "|") {
				break
			}
			if n, want := strings.Count(row, "|"), strings.Count(header, "|"); n != want {
				t.Errorf("row has %d bars, header %d: %s", n, want, row)
			}
		}
	}
}

// TestGenCommand: tracegen runs pinned to the client's CPU, a Datakit variant's load goes to the
// datakit receiver's port with -datakit, and a fixed rate, a duration and an acknowledgement log
// are passed on.
func TestGenCommand(t *testing.T) {
	ports := collectorproc.Listeners{OTLPHTTP: "127.0.0.1:4318", Datakit: "127.0.0.1:9529"}
	o := options{root: "/repo", gen: "bin/tracegen", conc: 100, requests: 1000, spans: 10, clientCPU: 1, duration: 30 * time.Second}
	name, args := genCommand(o, job{protocol: "otlp-http", variant: variant{Target: targetDatakit}}, &run{Rate: 1500.4}, ports, "/tmp/acks")
	got := name + " " + strings.Join(args, " ")
	for _, want := range []string{"taskset -c 1 /repo/bin/tracegen -protocol otlp-http -target 127.0.0.1:9529 ", " -datakit", " -rate 1500", " -duration 30s", " -acks /tmp/acks"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	o.clientCPU, o.duration = -1, 0
	name, args = genCommand(o, job{protocol: "otlp-http"}, &run{}, ports, "")
	got = name + " " + strings.Join(args, " ")
	if !strings.HasPrefix(got, "/repo/bin/tracegen -protocol otlp-http -target 127.0.0.1:4318 ") || strings.Contains(got, "-datakit") || strings.Contains(got, "-rate") || strings.Contains(got, "-acks") {
		t.Errorf("unpinned, closed loop, own port: %q", got)
	}
}

// TestMarkdownTableLeavesOutConstantColumns: a column with one value in every row is stated
// once below the table instead of in every row, but not one of the first keep columns, and not
// in a table of one row; the alignment row follows the columns kept.
func TestMarkdownTableLeavesOutConstantColumns(t *testing.T) {
	header := "| protocol | mode | offered | p99 ms | 429 |\n"
	rows := [][]string{{"otlp-grpc", "memory", "max", "9.50", "0"}, {"otlp-grpc", "memory", "max", "12.00", "0"}}
	want := "| protocol | mode | p99 ms |\n|---|---|--:|\n| otlp-grpc | memory | 9.50 |\n| otlp-grpc | memory | 12.00 |\n" +
		"\nThe same in every run: offered: max; 429: 0.\n"
	if got := markdownTable(header, 2, 2, rows); got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
	if got := markdownTable(header, 2, 2, rows[:1]); !strings.Contains(got, "| otlp-grpc | memory | max | 9.50 | 0 |") || strings.Contains(got, "The same") {
		t.Errorf("a table of one row lost a column:\n%s", got)
	}
	if got := markdownTable(header, 3, 0, rows); !strings.HasPrefix(got, "| p99 ms |\n|--:|\n") {
		t.Errorf("constant left columns: %s", got)
	}
}
