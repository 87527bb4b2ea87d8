package main

// runOne and its parts: one measurement of a collector, or of a tier of the Kafka deployment,
// under tracegen's load.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/collectorproc"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// sink is where a run counts the spans that arrived: the stand-in, or Kafka's spans topic for an
// agent.
type sink interface {
	WaitForSpans(ctx context.Context, n int) error
	Reset()
	spans() int
}

// standin is the Elasticsearch stand-in as a sink.
type standin struct{ *esstandin.Server }

func (s standin) spans() int { return spansIn(s.Stats()) }

// collectorSpec is one collector process of a run.
type collectorSpec struct {
	coll, cfg string
	overlays  []string
	sets      []string
	// cpu is the CPU it is pinned to (taskset -c); -1: none.
	cpu int
	// env is added to ELASTICSEARCH_URL, TRACEGATE_BUFFER_DIR and -collector-env.
	env []string
	// dir is its own directory: the ports overlay and the buffer's storage.
	dir string
}

// startCollector starts a collector with every listener on a free loopback port and waits for
// its health check.
func startCollector(ctx context.Context, o options, es *esstandin.Server, c collectorSpec) (*collectorproc.Process, collectorproc.Listeners, error) {
	bin := o.tracegate
	if c.coll == "stock" {
		bin = o.stock
	}
	bin = underRoot(o.root, bin)
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, collectorproc.Listeners{}, err
	}
	var ports collectorproc.Listeners
	attempts := 0
	proc, err := collectorproc.StartOnFreePorts(ctx, 3, func() (collectorproc.Options, error) {
		attempts++
		if attempts > 1 {
			fmt.Fprintf(os.Stderr, "   a port was taken before the collector bound it; again with other ports\n")
		}
		var overlay []byte
		var err error
		if ports, overlay, err = overlayFor(c.coll, c.cfg); err != nil {
			return collectorproc.Options{}, err
		}
		overlayPath := filepath.Join(c.dir, "ports.yaml")
		if err := os.WriteFile(overlayPath, overlay, 0o600); err != nil {
			return collectorproc.Options{}, err
		}
		binary, args := bin, append(configArgs(o.root, c.cfg, c.overlays, overlayPath), collectorFlags(c.sets, o.featureGates)...)
		if c.cpu >= 0 {
			taskset, err := exec.LookPath("taskset")
			if err != nil {
				return collectorproc.Options{}, fmt.Errorf("taskset: %w (util-linux)", err)
			}
			binary, args = taskset, append([]string{"-c", strconv.Itoa(c.cpu), bin}, args...)
		}
		env := append([]string{"ELASTICSEARCH_URL=" + es.URL(), "TRACEGATE_BUFFER_DIR=" + filepath.Join(c.dir, "buffer")}, c.env...)
		return collectorproc.Options{Binary: binary, Args: args, Env: append(env, o.collectorEnv...), HealthURL: "http://" + ports.Health + "/"}, nil
	})
	return proc, ports, err
}

// stopMeasured stops the measured collector; an error of the run, or of the stop, gets the
// collector's last log lines.
func stopMeasured(proc *collectorproc.Process, r *run) {
	if err := proc.Stop(30 * time.Second); err != nil && r.Error == "" {
		r.Error = "stop: " + err.Error()
	}
	if r.Error != "" {
		log := proc.Log()
		if len(log) > 2000 {
			log = log[len(log)-2000:]
		}
		r.Error += "\ncollector log (tail):\n" + log
	}
}

// stopHelper stops a collector that is not measured (a Kafka tier's other one), saying on stderr
// what went wrong.
func stopHelper(what string, proc *collectorproc.Process) {
	if err := proc.Stop(30 * time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "   %s: %v\n", what, err)
	}
}

// genCommand is tracegen's command for run r of job j against ports: pinned to the client's CPU,
// with -acks when acks names a file.
func genCommand(o options, j job, r *run, ports collectorproc.Listeners, acks string) (string, []string) {
	args := []string{
		"-protocol", j.protocol, "-target", target(ports, j.protocol, j.variant.Target), "-c", strconv.Itoa(o.conc), "-n", strconv.Itoa(o.requests),
		"-spans", strconv.Itoa(o.spans), "-service", "bench-" + j.protocol, "-json", "-",
		// One seed for every run: both collectors get the same payloads (trace ids differ per
		// request anyway, from the seed and the request's number).
		"-seed", "20261130",
	}
	if j.variant.Target == targetDatakit {
		args = append(args, "-datakit")
	}
	if r.Rate > 0 {
		args = append(args, "-rate", fmt.Sprintf("%.0f", r.Rate))
	}
	if r.KeepFraction > 0 {
		args = append(args, "-keep-fraction", strconv.FormatFloat(r.KeepFraction, 'g', -1, 64))
	}
	if o.duration > 0 {
		args = append(args, "-duration", o.duration.String())
	}
	if acks != "" {
		args = append(args, "-acks", acks)
	}
	name := underRoot(o.root, o.gen)
	if o.clientCPU >= 0 {
		return "taskset", append([]string{"-c", strconv.Itoa(o.clientCPU), name}, args...)
	}
	return name, args
}

// warmUp sends a few requests per client, which open the connections and page the code in, and
// waits for their spans in s, then forgets them: the measurement starts from a settled collector.
func warmUp(ctx context.Context, o options, j job, name string, args []string, s sink) error {
	out, err := exec.CommandContext(ctx, name, warmUpArgs(args, o.warmup)...).Output()
	if err != nil {
		return fmt.Errorf("tracegen warm-up: %w: %.300s", err, out)
	}
	if j.coll == floorCollector {
		return nil
	}
	want := o.conc * o.warmup * o.spans
	var res []loadgen.Result
	if json.Unmarshal(out, &res) == nil && len(res) == 1 {
		want = expectedSpans(j.coll, j.variant, res[0]) // a keep fraction's share
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_ = s.WaitForSpans(wctx, want) // UDP may lose some: then the timeout ends it
	cancel()
	time.Sleep(1500 * time.Millisecond) // a batch timeout (1s): stragglers land before the reset
	s.Reset()
	return nil
}

// warmUpArgs is the warm-up's tracegen command line from the measurement's args: n requests per
// client. -n, not -duration: a duration would make the warm-up a closed-loop run as long as the
// measurement, whose backlog and memory peak would land in the measurement. Its own trace ids
// (the clock's seed): a straggler of the warm-up must not pass for a span of the measurement. No
// acknowledgement log: the measurement's is the measurement's alone.
func warmUpArgs(args []string, n int) []string {
	for _, f := range []string{"-duration", "-rate", "-seed", "-acks"} {
		args = withoutFlag(args, f)
	}
	return genArgsWith(args, "-n", strconv.Itoa(n))
}

// startProfile takes the collector's CPU profile, then its heap, in the background when -profile
// asks for them; the function it returns waits for them. A profile that outlasts the load is
// collected after the measurement: waiting for it before would count its remaining seconds into
// the time until the last span arrived.
func startProfile(ctx context.Context, o options, r *run, pprofAddr string) func() {
	if o.profileDir == "" {
		return func() {}
	}
	profiled := make(chan error, 1)
	path := filepath.Join(o.profileDir, profileName(r)+".pprof")
	go func() {
		err := cpuProfile(ctx, pprofAddr, o.profileSeconds, path)
		// The heap right after the CPU profile, still under load: what the peak RSS is made of.
		heapPath := strings.TrimSuffix(path, ".pprof") + ".heap.pprof"
		profiled <- errors.Join(err, fetch(ctx, "http://"+pprofAddr+"/debug/pprof/heap", heapPath))
	}()
	return func() {
		if err := <-profiled; err != nil {
			fmt.Fprintf(os.Stderr, "   profile: %v\n", err)
		}
	}
}

// awaitSpans waits until s holds want spans, giving up after o.stall without a new one or
// o.maxWait after start. It returns when the wait ended (the last arrival seen when it gave up),
// the spans s held then, and whether it gave up.
func awaitSpans(ctx context.Context, o options, s sink, want int, protocol string, start time.Time) (time.Time, int, bool) {
	last, lastChange := -1, time.Now()
	deadline := start.Add(o.maxWait)
	for {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		err := s.WaitForSpans(wctx, want)
		cancel()
		if err == nil {
			return time.Now(), s.spans(), false
		}
		n := s.spans()
		if n != last {
			last, lastChange = n, time.Now()
		}
		stall := o.stall
		if protocol == loadgen.JaegerUDPCompact {
			stall = min(stall, 5*time.Second) // lost datagrams never come; what was queued arrives quickly
		}
		if ctx.Err() != nil || time.Since(lastChange) > stall || time.Now().After(deadline) {
			return lastChange, n, true
		}
	}
}

// runLoad runs tracegen and returns its one result and the CPU it used.
func runLoad(ctx context.Context, name string, args []string) (loadgen.Result, time.Duration, error) {
	gen := exec.CommandContext(ctx, name, args...)
	gen.Stderr = os.Stderr
	out, err := gen.Output()
	if err != nil {
		return loadgen.Result{}, 0, fmt.Errorf("tracegen: %w", err)
	}
	var results []loadgen.Result
	if err := json.Unmarshal(out, &results); err != nil || len(results) != 1 {
		return loadgen.Result{}, 0, fmt.Errorf("tracegen output: %w: %.200s", err, out)
	}
	return results[0], gen.ProcessState.UserTime() + gen.ProcessState.SystemTime(), nil
}

func runOne(ctx context.Context, o options, es *esstandin.Server, j job) (r run) {
	v := j.variant
	r = run{
		Collector: j.coll, Mode: j.mode, Protocol: j.protocol, Config: j.cfg, Variant: v.Name, Settings: v.Set, Overlays: v.Overlays, Rate: o.rate,
		KeepFraction: v.KeepFraction, Expect: v.Expect, Against: v.Against, Target: v.Target, Kafka: v.Kafka,
	}
	fail := func(err error) run { r.Error = err.Error(); return r }
	switch {
	case j.rateErr != nil:
		return fail(j.rateErr)
	case j.rate > 0:
		r.Rate = j.rate
	case o.rateFraction > 0:
		rate, err := halfRate(o.saturation, j.protocol, o.rateFraction)
		if err != nil {
			return fail(err)
		}
		r.Rate = rate
	}
	es.Reset()
	tmp, err := os.MkdirTemp("", "benchrun-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	measured := collectorSpec{
		coll: j.coll, cfg: j.cfg, overlays: v.Overlays, sets: append(append([]string(nil), o.sets...), v.Set...),
		cpu: o.collectorCPU, dir: filepath.Join(tmp, "collector"),
	}
	var brokers []string
	var peer *collectorproc.Process // a tiers run's gateway
	if v.Kafka != "" {
		kafka, err := startKafka()
		if err != nil {
			return fail(fmt.Errorf("kafka: %w", err))
		}
		defer kafka.Close()
		brokers = kafka.ListenAddrs()
		measured.env = []string{"KAFKA_BROKERS=" + strings.Join(brokers, ",")}
		switch v.Kafka {
		case kafkaGateway:
			return runGateway(ctx, o, es, j, r, measured, brokers)
		case kafkaTiers:
			gw := measured
			gw.overlays, gw.cpu, gw.dir = []string{gatewayOverlay}, -1, filepath.Join(tmp, "gateway")
			if peer, _, err = startCollector(ctx, o, es, gw); err != nil {
				return fail(fmt.Errorf("gateway: %w", err))
			}
			defer stopHelper("gateway", peer)
		}
		measured.overlays = []string{agentOverlay}
	}
	proc, ports, err := startCollector(ctx, o, es, measured)
	if err != nil {
		return fail(err)
	}
	defer stopMeasured(proc, &r)
	pid := proc.Pid()
	var s sink = standin{es}
	if v.Kafka == kafkaAgent {
		counter, err := newSpanCounter(ctx, brokers, spansTopic)
		if err != nil {
			return fail(fmt.Errorf("kafka: %w", err))
		}
		defer counter.Close()
		s, r.Sink = counter, sinkKafka
	}
	acks := ""
	if v.DeliveryLatency {
		acks = filepath.Join(tmp, "acks")
	}
	name, genArgs := genCommand(o, j, &r, ports, acks)
	if o.warmup > 0 {
		if err := warmUp(ctx, o, j, name, genArgs, s); err != nil {
			return fail(err)
		}
	}
	var arrived arrivals
	if v.DeliveryLatency {
		es.OnSpan(arrived.record)
		defer es.OnSpan(nil)
	}
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return fail(err)
	}
	self0, _ := cpuTicks(os.Getpid())
	var peer0 uint64
	if peer != nil {
		peer0, _ = cpuTicks(peer.Pid())
	}
	if o.esDown {
		if err := es.SetRefusing(true); err != nil {
			return fail(err)
		}
	}
	start := time.Now()
	defer startProfile(ctx, o, &r, ports.Pprof)()
	gen, genCPU, genErr := runLoad(ctx, name, genArgs)
	loadEnd := time.Now()
	cpuLoad, cpuLoadErr := cpuTicks(pid)
	selfLoad, _ := cpuTicks(os.Getpid())
	if o.esDown {
		if err := es.SetRefusing(false); err != nil {
			return fail(err)
		}
	}
	if genErr != nil {
		return fail(genErr)
	}
	r.Gen = gen

	// Wait for every expected span (acknowledged, or of a kept trace; UDP: every span sent). The
	// floor delivers nothing: its window ends with the load.
	want := expectedSpans(j.coll, v, r.Gen)
	r.ExpectedSpans = want
	end, n, gaveUpWaiting := awaitSpans(ctx, o, s, want, j.protocol, start)
	if gaveUpWaiting {
		what, where := "acknowledged", "the stand-in"
		if r.expectsKeptOnly() {
			what = "kept"
		}
		if r.Sink == sinkKafka {
			where = "Kafka"
		}
		r.Error = fmt.Sprintf("%d of %d %s spans reached %s %s", n, want, what, where, gaveUp)
	}
	cpu1, err := cpuTicks(pid)
	if err != nil {
		return fail(err)
	}
	self1, _ := cpuTicks(os.Getpid())
	st := es.Stats()
	r.SpansInES = s.spans()
	if n := spansIn(st); n > 0 {
		r.SpanDocBytes = float64(st.SpanSourceBytes) / float64(n)
	}
	r.DuplicateSpans = st.DuplicateSpans
	r.BulkRequests = st.BulkRequests
	wall := end.Sub(start).Seconds()
	r.LastSpanSeconds = wall
	if wall > 0 {
		r.CPUPercent = 100 * float64(cpu1-cpu0) / clkTck / wall
		r.StandinCPUPercent = 100 * float64(self1-self0) / clkTck / wall
		r.GenCPUPercent = 100 * genCPU.Seconds() / wall
		r.E2ESpansPerSec = float64(r.SpansInES) / wall
		if peer != nil {
			if peer1, err := cpuTicks(peer.Pid()); err == nil {
				r.PeerCPUPercent = 100 * float64(peer1-peer0) / clkTck / wall
			}
		}
	}
	if r.CPUPercent > 0 {
		r.SpansPerCoreSec = r.E2ESpansPerSec / (r.CPUPercent / 100)
	}
	if cpuSeconds := float64(cpu1-cpu0) / clkTck; cpuSeconds > 0 {
		r.AcceptedSpansPerCoreSec = float64(r.Gen.SpansAcked) / cpuSeconds
	}
	r.LoadSeconds = loadEnd.Sub(start).Seconds()
	r.DrainSeconds = max(0, end.Sub(loadEnd).Seconds())
	if r.LoadSeconds > 0 {
		r.AcceptedSpansPerSec = float64(r.Gen.SpansAcked) / r.LoadSeconds
		if cpuLoadErr == nil {
			r.LoadCPUPercent = 100 * float64(cpuLoad-cpu0) / clkTck / r.LoadSeconds
		}
		r.ClientLoadCPUPercent = 100 * (genCPU.Seconds() + float64(selfLoad-self0)/clkTck) / r.LoadSeconds
	}
	if hwm, err := peakRSS(pid); err == nil {
		r.PeakRSSMB = float64(hwm) / 1024
	} else if r.Error == "" {
		r.Error = err.Error()
	}
	if v.DeliveryLatency {
		es.OnSpan(nil)
		if ack, err := readAcks(acks); err != nil {
			r.Error = cmp.Or(r.Error, err.Error())
		} else {
			d := arrived.match(ack)
			r.Delivery = &d
		}
	}
	if r.expectsKeptOnly() && r.Error == "" {
		select {
		case <-time.After(lateWindow):
		case <-ctx.Done():
		}
		r.LateSpans = s.spans() - r.SpansInES
	}
	return r
}

// runGateway measures the gateway tier alone. First an agent on the collector's CPU takes the
// load into Kafka and stops, unmeasured; then the gateway starts on that CPU and drains Kafka into
// the stand-in. Its CPU and the spans it stores count from its health check on (what it stored
// before is left out of the rate); r.Gen is the agent's load, so the latency columns are the
// agent's and the report leaves them out.
func runGateway(ctx context.Context, o options, es *esstandin.Server, j job, r0 run, gw collectorSpec, brokers []string) (r run) {
	r = r0
	fail := func(err error) run { r.Error = err.Error(); return r }
	agent := gw
	agent.overlays, agent.dir = []string{agentOverlay}, filepath.Join(filepath.Dir(gw.dir), "agent")
	gw.overlays = []string{gatewayOverlay}
	aproc, aports, err := startCollector(ctx, o, es, agent)
	if err != nil {
		return fail(fmt.Errorf("agent: %w", err))
	}
	counter, err := newSpanCounter(ctx, brokers, spansTopic)
	if err != nil {
		stopHelper("agent", aproc)
		return fail(fmt.Errorf("kafka: %w", err))
	}
	name, args := genCommand(o, j, &r, aports, "")
	gen, _, genErr := runLoad(ctx, name, args)
	r.Gen = gen
	r.ExpectedSpans = expectedSpans(j.coll, j.variant, gen)
	var inKafka int
	var short bool
	if genErr == nil {
		_, inKafka, short = awaitSpans(ctx, o, counter, r.ExpectedSpans, j.protocol, time.Now())
	}
	counter.Close()
	stopHelper("agent", aproc)
	switch {
	case genErr != nil:
		return fail(fmt.Errorf("the agent filling Kafka: %w", genErr))
	case short:
		return fail(fmt.Errorf("the agent filling Kafka stopped at %d of %d acknowledged spans", inKafka, r.ExpectedSpans))
	}

	es.Reset()
	proc, ports, err := startCollector(ctx, o, es, gw)
	if err != nil {
		return fail(err)
	}
	defer stopMeasured(proc, &r)
	pid := proc.Pid()
	start := time.Now()
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return fail(err)
	}
	self0, _ := cpuTicks(os.Getpid())
	r.StartCPUSeconds = float64(cpu0) / clkTck
	r.SpansBeforeStart = spansIn(es.Stats())
	defer startProfile(ctx, o, &r, ports.Pprof)()
	end, n, gaveUpWaiting := awaitSpans(ctx, o, standin{es}, r.ExpectedSpans, j.protocol, start)
	if gaveUpWaiting {
		r.Error = fmt.Sprintf("%d of %d acknowledged spans reached the stand-in %s", n, r.ExpectedSpans, gaveUp)
	}
	cpu1, err := cpuTicks(pid)
	if err != nil {
		return fail(err)
	}
	self1, _ := cpuTicks(os.Getpid())
	st := es.Stats()
	r.SpansInES = spansIn(st)
	if r.SpansInES > 0 {
		r.SpanDocBytes = float64(st.SpanSourceBytes) / float64(r.SpansInES)
	}
	r.DuplicateSpans, r.BulkRequests = st.DuplicateSpans, st.BulkRequests
	wall := end.Sub(start).Seconds()
	r.LastSpanSeconds, r.DrainSeconds = wall, wall
	if wall > 0 {
		r.CPUPercent = 100 * float64(cpu1-cpu0) / clkTck / wall
		// The client side while the gateway drains: Kafka and the stand-in, both in this process.
		r.StandinCPUPercent = 100 * float64(self1-self0) / clkTck / wall
		r.ClientLoadCPUPercent = r.StandinCPUPercent
		r.E2ESpansPerSec = float64(r.SpansInES-r.SpansBeforeStart) / wall
	}
	if r.CPUPercent > 0 {
		// What the gateway takes from Kafka it stores: taken and stored per core are one rate.
		r.SpansPerCoreSec = r.E2ESpansPerSec / (r.CPUPercent / 100)
		r.AcceptedSpansPerCoreSec = r.SpansPerCoreSec
	}
	if hwm, err := peakRSS(pid); err == nil {
		r.PeakRSSMB = float64(hwm) / 1024
	} else if r.Error == "" {
		r.Error = err.Error()
	}
	return r
}
