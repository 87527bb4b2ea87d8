package main

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

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
			if strings.Contains(string(b), "0.0.0.0") || target(ports, "otlp-http") == "" || ports.Health == "" || (target(ports, "ddtrace-v0.4") != "") != tt.wantDDTrace {
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
	for _, file := range []string{"sweep.yaml", "durability.yaml", "memory.yaml"} {
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
		"not delivered | – | – |",
		"| otlp-grpc | memory | tracegate | 1.00 | 3.00 | 9.00 | +0.50 | +6.00 |",
		"| otlp-grpc | memory | stock | 1.00 | 3.00 | 12.50 | +1.00 | +9.50 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| zipkin-json | memory | tracegate | 1.00") {
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
// measurement's -duration and -rate.
func TestWarmUpArgs(t *testing.T) {
	args := []string{"-c", "1", "bin/tracegen", "-protocol", "otlp-http", "-c", "100", "-n", "1000", "-duration", "30s", "-rate", "500", "-json", "-"}
	got := strings.Join(genArgsWith(withoutFlag(withoutFlag(args, "-duration"), "-rate"), "-n", "5"), " ")
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
	for _, h := range []string{runsHeader, ratiosHeader} {
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
	for _, header := range []string{runsHeader, ratiosHeader} {
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
