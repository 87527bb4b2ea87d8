package bufferprocessor

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fakeESEnv makes TestFakeElasticsearchProcess serve instead of skipping: the CPU benchmark runs the
// bulk responder in a child process so that its CPU is not counted in the collector's.
const fakeESEnv = "TRACEGATE_FAKE_ES_PROCESS"

// fakeESHandler answers like Elasticsearch 8 for what the exporter calls: GET / (version) and
// POST /_bulk (gzip or not), with the X-Elastic-Product header and one "created" item per
// document. It does not parse documents (internal/testbed/esstandin does, and would dominate the CPU).
func fakeESHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		path := strings.Trim(r.URL.Path, "/")
		if path == "" {
			_, _ = io.WriteString(w, `{"name":"fake","cluster_name":"fake","cluster_uuid":"ZmFrZQ","version":{"number":"8.17.0","build_flavor":"default","minimum_wire_compatibility_version":"7.17.0","minimum_index_compatibility_version":"7.0.0"},"tagline":"You Know, for Search"}`)
			return
		}
		if !strings.HasSuffix(path, "_bulk") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"type":"illegal_argument_exception","reason":"fake: unsupported"},"status":400}`)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			body = zr
		}
		var out bytes.Buffer
		out.WriteString(`{"took":1,"errors":false,"items":[`)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		n := 0
		for sc.Scan() {
			line := sc.Bytes()
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			// An action line {"create":{...}} or {"index":{...}}; the next line is its document.
			action := "create"
			if i := bytes.IndexByte(line, '"'); i >= 0 {
				if j := bytes.IndexByte(line[i+1:], '"'); j >= 0 {
					action = string(line[i+1 : i+1+j])
				}
			}
			if action != "delete" && !sc.Scan() {
				break
			}
			if n > 0 {
				out.WriteByte(',')
			}
			fmt.Fprintf(&out, `{%q:{"_index":"traces","_id":"%d","_version":1,"result":"created","status":201}}`, action, n)
			n++
		}
		out.WriteString(`]}`)
		_, _ = w.Write(out.Bytes())
	})
}

// TestFakeElasticsearchProcess is the child process of startFakeES; skipped otherwise.
func TestFakeElasticsearchProcess(t *testing.T) {
	if os.Getenv(fakeESEnv) != "1" {
		t.Skip("helper process for BenchmarkPipelineCPU")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: fakeESHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin when it is done
	os.Exit(0)                           // no goleak report for the serving goroutines
}

// startFakeES runs the fake bulk responder in a child process (this test binary) and returns its URL.
func startFakeES(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeElasticsearchProcess$")
	cmd.Env = append(os.Environ(), fakeESEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	cmd.Stderr = os.Stderr
	require.NoError(b, cmd.Start())
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	url, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(b, err)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return strings.TrimSpace(url)
}

// newBenchESExporter is esexportertest.NewExporter for a benchmark: the contrib exporter, endpoints
// [url], sending_queue disabled (synchronous bulks, as in front of the buffer).
func newBenchESExporter(b *testing.B, url string) exporter.Traces {
	return newBenchESExporterWith(b, url, nil)
}

// newBenchESExporterWith is newBenchESExporter with more exporter settings.
func newBenchESExporterWith(b *testing.B, url string, settings map[string]any) exporter.Traces {
	return newBenchESSignalExporter(b, url, settings, func(f exporter.Factory, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
		return f.CreateTraces(context.Background(), set, cfg)
	})
}

// countingConsumer counts the spans its next consumer accepted (an itemCounter of spans).
type countingConsumer struct {
	next consumer.Traces
	*itemCounter[ptrace.Traces]
}

func newCountingConsumer(next consumer.Traces) *countingConsumer {
	return &countingConsumer{next: next, itemCounter: newItemCounter[ptrace.Traces](tracesSignal{}, next.ConsumeTraces)}
}

func (c *countingConsumer) waitSpans(want int64) { c.wait(want) }

func (c *countingConsumer) Capabilities() consumer.Capabilities { return c.next.Capabilities() }

func (c *countingConsumer) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return c.consume(ctx, td)
}

// processCPU is the user + system CPU time of this process.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pipelineProducers is how many goroutines produce sends from (and the buffer's threads in
// BenchmarkPipelineCPU).
const pipelineProducers = 8

// produce sends n batches from pool through in, from pipelineProducers goroutines, retrying a
// refusal (a full buffer) the way a client retries a 429.
func produce(b *testing.B, in consumer.Traces, pool []ptrace.Traces, n int) {
	b.Helper()
	produceItems(b, in.ConsumeTraces, pool, n)
}

// produceItems is produce for any signal's consume function.
func produceItems[T any](b *testing.B, consume func(context.Context, T) error, pool []T, n int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range pipelineProducers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				for {
					err := consume(context.Background(), pool[i%int64(len(pool))])
					if err == nil {
						break
					}
					if !errors.Is(err, ErrFull) {
						b.Error(err)
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkPipelineCPU: process CPU per span of "buffer (memory mode) → contrib elasticsearch
// exporter (sending_queue disabled)" against "exporter alone", same spans (100-span batches, 8
// producers; the buffer has threads=8 and max_batch_items 0, so the bulks are the same). The
// Elasticsearch side is a fake bulk responder in a child process, not counted. One op = one batch
// through each pipeline; the two alternate in chunks so that both see the same machine.
func BenchmarkPipelineCPU(b *testing.B) {
	const (
		chunk    = 256
		perBatch = 100
	)
	url := startFakeES(b)
	alone := newCountingConsumer(newBenchESExporter(b, url))
	behind := newCountingConsumer(newBenchESExporter(b, url))
	cfg := memCfg()
	cfg.Threads, cfg.QueueSize = pipelineProducers, 10_000
	h := startB(b, cfg, behind)
	defer h.shutdownB(b)

	pool := make([]ptrace.Traces, 64)
	for i := range pool {
		pool[i] = benchTraces(perBatch)
	}
	// Warm both paths (connections, pools) before measuring.
	produce(b, alone, pool, 64)
	produce(b, h.p, pool, 64)
	behind.waitSpans(64 * perBatch)

	var cpuAlone, cpuBuffer, wallAlone, wallBuffer time.Duration
	var spansAlone, spansBuffer int64
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)

		c0, t0 := processCPU(b), time.Now()
		produce(b, alone, pool, n)
		cpuAlone += processCPU(b) - c0
		wallAlone += time.Since(t0)
		spansAlone += int64(n * perBatch)

		want := behind.count() + int64(n*perBatch)
		c0, t0 = processCPU(b), time.Now()
		produce(b, h.p, pool, n)
		behind.waitSpans(want)
		cpuBuffer += processCPU(b) - c0
		wallBuffer += time.Since(t0)
		spansBuffer += int64(n * perBatch)
	}
	b.StopTimer()
	a := float64(cpuAlone.Nanoseconds()) / float64(spansAlone)
	w := float64(cpuBuffer.Nanoseconds()) / float64(spansBuffer)
	b.ReportMetric(a, "cpu-ns/span-exporter")
	b.ReportMetric(w, "cpu-ns/span-buffer+exporter")
	b.ReportMetric(100*(w-a)/a, "cpu-%-added")
	b.ReportMetric(float64(spansAlone)/wallAlone.Seconds(), "spans/s-exporter")
	b.ReportMetric(float64(spansBuffer)/wallBuffer.Seconds(), "spans/s-buffer+exporter")
}

// sinkCount is a next consumer that only counts spans (optionally after a fixed delay per
// delivery, standing in for a bulk round trip), and tracks the deliveries in flight.
type sinkCount struct {
	delay       time.Duration
	next        consumer.Traces // optional, called after delay
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	counter     *countingConsumer
}

func newSinkCount() *sinkCount { return newSinkCountTo(0, nil) }

func newSinkCountTo(delay time.Duration, next consumer.Traces) *sinkCount {
	s := &sinkCount{delay: delay, next: next}
	s.counter = newCountingConsumer(consumerFunc(s.consume))
	return s
}

type consumerFunc func(context.Context, ptrace.Traces) error

func (consumerFunc) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (f consumerFunc) ConsumeTraces(ctx context.Context, td ptrace.Traces) error { return f(ctx, td) }

func (*sinkCount) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (s *sinkCount) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return s.counter.ConsumeTraces(ctx, td)
}

func (s *sinkCount) consume(ctx context.Context, td ptrace.Traces) error {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	raiseMax(&s.maxInFlight, n)
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	if s.next != nil {
		return s.next.ConsumeTraces(ctx, td)
	}
	return nil
}

func (s *sinkCount) spans() int64 { return s.counter.count() }

func (s *sinkCount) waitSpans(want int64) { s.counter.waitSpans(want) }

// BenchmarkDocumentIDsCPU: process CPU per span of configs/default.yaml's trace path behind the
// receiver (elasticmapping → buffer in memory mode → contrib exporter) with the document ids
// (document_ids, traces_dynamic_id) against without, for the spans make bench sends (tracegen's,
// decoded from OTLP protobuf as the receiver does), alternated in chunks; the fake Elasticsearch
// runs in a child process. The receiver's own work is left out, so the share added is at least
// what make bench would show.
func BenchmarkDocumentIDsCPU(b *testing.B) {
	url := startFakeES(b)
	withIDs, withoutIDs := defaultTracePath(b, url, true), defaultTracePath(b, url, false)
	withIDs.reqs = otlpRequests(b, tracegenTraces(64))
	withoutIDs.reqs = withIDs.reqs
	without, with := alternateCPUPerSpan(b, withoutIDs, withIDs)
	b.ReportMetric(without, "cpu-ns/span-without-ids")
	b.ReportMetric(with, "cpu-ns/span-with-ids")
	b.ReportMetric(with-without, "cpu-ns/span-added")
	b.ReportMetric(100*(with-without)/without, "cpu-%-added")
}
