// Command tracegen is tracegate's load generator: it sends pre-encoded traces over one or more
// protocols (ddtrace v0.4/v0.5, Jaeger Thrift HTTP and UDP compact, Zipkin v2 JSON and proto,
// OTLP HTTP and gRPC) from many concurrent clients, each request a fresh trace, and reports
// throughput, per-request latency (mean, p50, p99, max, and per second of the run) and status counts.
//
//	tracegen -protocol otlp-http                       # 100 clients x 1000 requests x 10 spans to localhost:4318
//	tracegen -protocol all -c 10 -n 50                 # every protocol on its standard port
//	tracegen -protocol zipkin-json -target host:9411 -rate 2000 -duration 60s -json out.json
//	tracegen -protocol otlp-grpc -rate 1301 -duration 30s -timeline  # p50/p99/max of each second
//	tracegen -protocol ddtrace-v0.4 -keep-fraction 0.1                # 1 trace in 10 priority 2, the rest -1
//	tracegen -protocol jaeger-thrift-http -datakit                    # to Datakit's port and path: localhost:9529/apis/traces
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// defaultPorts are each protocol's standard receiver port.
var defaultPorts = map[string]string{
	loadgen.OTLPGRPC: "4317", loadgen.OTLPHTTP: "4318", loadgen.ZipkinJSON: "9411", loadgen.ZipkinProto: "9411",
	loadgen.JaegerThriftHTTP: "14268", loadgen.JaegerUDPCompact: "6831", loadgen.DDTraceV04: "8126", loadgen.DDTraceV05: "8126",
	loadgen.ElasticAPMIntake: "8200",
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tracegen:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tracegen", flag.ContinueOnError)
	protocols := fs.String("protocol", loadgen.OTLPHTTP, "comma-separated protocols, or all: "+strings.Join(loadgen.Protocols(), ", "))
	target := fs.String("target", "", "host:port of the receiver (default: 127.0.0.1 and the protocol's standard port); with several protocols, protocol=host:port,...")
	host := fs.String("host", "127.0.0.1", "host for the standard ports when -target is not given")
	conc := fs.Int("c", 100, "concurrent clients")
	requests := fs.Int("n", 1000, "requests per client (ignored with -duration)")
	spans := fs.Int("spans", 10, "spans per request (one trace per request)")
	rate := fs.Float64("rate", 0, "fixed total rate in requests/s (0: as fast as the clients go)")
	duration := fs.Duration("duration", 0, "send for this long instead of -n requests per client")
	pool := fs.Int("pool", 64, "pre-encoded payloads to cycle through (each request still gets a fresh trace id)")
	service := fs.String("service", "tracegen", "service name of the spans")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	seed := fs.Uint64("seed", 0, "random seed (0: from the clock)")
	jsonOut := fs.String("json", "", "write the results as JSON to this file (- for stdout, then no text summary)")
	timeline := fs.Bool("timeline", false, "also print the latency of each second of the run (the JSON always has it)")
	datakit := fs.Bool("datakit", false, "send to Datakit's port ("+loadgen.DatakitPort+" unless -target) at its path for the protocol: ddtrace /v0.4|/v0.5/traces, jaeger-thrift-http /apis/traces, zipkin /api/v2/spans, otlp-http /otel/v1/traces")
	acksPath := fs.String("acks", "", "write one line per acknowledged request to this file: its trace id (32 hex digits) and the time of its answer (Unix nanoseconds)")
	keepFraction := fs.Float64("keep-fraction", 0, "ddtrace protocols only: this share of the traces, picked from their trace id, carry sampling priority 2 (user keep) and the rest -1 (user reject), as a tracer at DD_TRACE_SAMPLE_RATE sends them; 0: every trace priority 1")
	if err := fs.Parse(args); err != nil {
		return err
	}
	list := strings.Split(*protocols, ",")
	if *protocols == "all" {
		list = loadgen.Protocols()
	}
	targets, err := parseTargets(*target, list, *host, *datakit)
	if err != nil {
		return err
	}
	for _, p := range list {
		if err := loadgen.CheckKeepFraction(p, *keepFraction); err != nil {
			return fmt.Errorf("-keep-fraction: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var acks *ackLog
	if *acksPath != "" {
		if acks, err = newAckLog(*acksPath); err != nil {
			return err
		}
		defer acks.close()
	}
	var results []*loadgen.Result
	for _, p := range list {
		res, err := loadgen.Run(ctx, loadgen.Config{
			Protocol: p, Target: targets[p], Datakit: *datakit, Concurrency: *conc, Requests: *requests,
			Duration: *duration, Spans: *spans, Rate: *rate, PoolSize: *pool, Service: *service, Seed: *seed, Timeout: *timeout,
			KeepFraction: *keepFraction, OnAck: acks.record(),
		})
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		results = append(results, res)
		if *jsonOut != "-" {
			printSummary(stdout, res)
			if *timeline {
				printTimeline(stdout, res)
			}
		}
	}
	if err := acks.close(); err != nil {
		return err
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		b = append(b, '\n')
		if *jsonOut == "-" {
			_, err = stdout.Write(b)
			return err
		}
		return os.WriteFile(*jsonOut, b, 0o644)
	}
	return nil
}

// parseTargets maps each protocol to its address: one -target for a single protocol, or
// protocol=host:port pairs, or the standard ports on host (Datakit's port with datakit).
func parseTargets(flagValue string, protocols []string, host string, datakit bool) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range protocols {
		port, ok := defaultPorts[p]
		if !ok {
			return nil, fmt.Errorf("unknown protocol %q (want one of %s)", p, strings.Join(loadgen.Protocols(), ", "))
		}
		if datakit {
			if _, err := loadgen.DatakitPath(p); err != nil {
				return nil, fmt.Errorf("-datakit: %w", err)
			}
			port = loadgen.DatakitPort
		}
		out[p] = host + ":" + port
	}
	if flagValue == "" {
		return out, nil
	}
	if !strings.Contains(flagValue, "=") {
		if len(protocols) != 1 {
			return nil, fmt.Errorf("-target %s: with several protocols use a comma-separated list of protocol=host:port", flagValue)
		}
		out[protocols[0]] = flagValue
		return out, nil
	}
	for kv := range strings.SplitSeq(flagValue, ",") {
		p, addr, ok := strings.Cut(kv, "=")
		if _, known := out[p]; !ok || !known {
			return nil, fmt.Errorf("-target: %q is not protocol=host:port for one of the chosen protocols", kv)
		}
		out[p] = addr
	}
	return out, nil
}

// printTimeline prints one line per second of the run, by when its requests fell due.
func printTimeline(w io.Writer, r *loadgen.Result) {
	for _, s := range r.Timeline {
		fmt.Fprintf(w, "  second %3d: %6d requests  p50 %8.2f  p99 %8.2f  max %8.2f ms\n", s.Second, s.Count, s.P50, s.P99, s.Max)
	}
}

func printSummary(w io.Writer, r *loadgen.Result) {
	fmt.Fprintf(w, "%s -> %s%s: %d requests x %d spans from %d clients in %.2fs: %.0f req/s, %.0f spans/s, %.2f KB/request, %.1f MB\n",
		r.Protocol, r.Target, r.Path, r.Requests, r.SpansPerRequest, r.Concurrency, r.ElapsedSeconds, r.RequestsPerSec, r.SpansPerSec,
		r.BytesPerRequest/1024, float64(r.Bytes)/1e6)
	fmt.Fprintf(w, "  latency ms: mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n", r.Latency.Mean, r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.Max)
	if r.KeepFraction > 0 {
		fmt.Fprintf(w, "  keep fraction %g: %d spans of kept traces (priority %d) sent, %d acknowledged; the other traces priority %d\n",
			r.KeepFraction, r.SpansKept, loadgen.PriorityUserKeep, r.SpansKeptAcked, loadgen.PriorityUserReject)
	}
	fmt.Fprintf(w, "  status: 2xx %d  429 %d  5xx %d  other %d  transport errors %d  %v\n", r.Status.OK, r.Status.TooMany, r.Status.Server, r.Status.Other, r.Status.Transport, r.Status.Codes)
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
}

// ackLog is the -acks file: what a benchmark needs to time each trace from its acknowledgement
// to its arrival.
type ackLog struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	line []byte
	err  error
}

func newAckLog(path string) (*ackLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &ackLog{f: f, w: bufio.NewWriter(f)}, nil
}

// record is the loadgen.Config.OnAck that writes to l; nil without a log.
func (l *ackLog) record() func(id loadgen.TraceID, at time.Time) {
	if l == nil {
		return nil
	}
	return func(id loadgen.TraceID, at time.Time) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.err == nil {
			l.line = loadgen.AppendAck(l.line[:0], id, at)
			_, l.err = l.w.Write(l.line)
		}
	}
}

// close flushes and closes the file once, returning the first error.
func (l *ackLog) close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return l.err
	}
	l.err = errors.Join(l.err, l.w.Flush(), l.f.Close())
	l.f = nil
	return l.err
}
