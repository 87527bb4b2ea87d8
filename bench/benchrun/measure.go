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
	// env is added after ELASTICSEARCH_URL, TRACEGATE_BUFFER_DIR and -collector-env (a later
	// KEY wins).
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
		env := []string{"ELASTICSEARCH_URL=" + es.URL(), "TRACEGATE_BUFFER_DIR=" + filepath.Join(c.dir, "buffer")}
		env = append(env, o.collectorEnv...)
		return collectorproc.Options{Binary: binary, Args: args, Env: append(env, c.env...), HealthURL: "http://" + ports.Health + "/"}, nil
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

// runOne measures job j: the row of its settings and offered rate, then its collector under the
// load, with Kafka in this process for a variant of the Kafka tier.
func runOne(ctx context.Context, o options, es *esstandin.Server, j job) (r run) {
	v := j.variant
	r = run{
		Collector: j.coll, Mode: j.mode, Protocol: j.protocol, Config: j.cfg, Variant: v.Name, Settings: v.Set, Overlays: v.Overlays, Rate: o.rate,
		KeepFraction: v.KeepFraction, Expect: v.Expect, Against: v.Against, Target: v.Target, Kafka: v.Kafka,
	}
	fail := func(err error) run { r.Error = err.Error(); return r }
	rate, err := offeredRate(o, j)
	if err != nil {
		return fail(err)
	}
	r.Rate = rate
	es.Reset()
	tmp, err := os.MkdirTemp("", "benchrun-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	measured := collectorSpec{
		coll: j.coll, cfg: j.cfg, overlays: v.Overlays, sets: append(append([]string(nil), o.sets...), v.Set...),
		cpu: o.collectorCPU, dir: filepath.Join(tmp, "collector"), env: v.Env,
	}
	if v.Kafka != "" {
		return runWithKafka(ctx, o, es, j, r, measured, tmp)
	}
	return runCollector(ctx, o, es, j, r, measured, tmp, kafkaTier{})
}

// offeredRate is the request rate j's run offers: its variant's (rate_of), a fraction of stock's
// saturation rate (-rate-fraction), or -rate (0: closed loop).
func offeredRate(o options, j job) (float64, error) {
	switch {
	case j.rateErr != nil:
		return 0, j.rateErr
	case j.rate > 0:
		return j.rate, nil
	case o.rateFraction > 0:
		return halfRate(o.saturation, j.protocol, o.rateFraction)
	}
	return o.rate, nil
}

// kafkaTier is what a variant of the Kafka tier runs beside the measured collector: the brokers,
// and in a tiers run the gateway behind the agent.
type kafkaTier struct {
	brokers []string
	gateway *collectorproc.Process
}

// runWithKafka starts Kafka for a variant of the Kafka tier. The gateway is measured on its own
// (runGateway); the agent, alone or with the gateway behind it, as any collector.
func runWithKafka(ctx context.Context, o options, es *esstandin.Server, j job, r run, measured collectorSpec, tmp string) run {
	fail := func(err error) run { r.Error = err.Error(); return r }
	kafka, err := startKafka()
	if err != nil {
		return fail(fmt.Errorf("kafka: %w", err))
	}
	defer kafka.Close()
	k := kafkaTier{brokers: kafka.ListenAddrs()}
	measured.env = []string{"KAFKA_BROKERS=" + strings.Join(k.brokers, ",")}
	switch j.variant.Kafka {
	case kafkaGateway:
		return runGateway(ctx, o, es, j, r, measured, k.brokers)
	case kafkaTiers:
		gw := measured
		gw.overlays, gw.cpu, gw.dir = []string{gatewayOverlay}, -1, filepath.Join(tmp, "gateway")
		if k.gateway, _, err = startCollector(ctx, o, es, gw); err != nil {
			return fail(fmt.Errorf("gateway: %w", err))
		}
		defer stopHelper("gateway", k.gateway)
	}
	measured.overlays = []string{agentOverlay}
	return runCollector(ctx, o, es, j, r, measured, tmp, k)
}

// runCollector starts the collector of spec, warms it up and measures it under tracegen's load.
func runCollector(ctx context.Context, o options, es *esstandin.Server, j job, r0 run, spec collectorSpec, tmp string, k kafkaTier) (r run) {
	r = r0
	fail := func(err error) run { r.Error = err.Error(); return r }
	proc, ports, err := startCollector(ctx, o, es, spec)
	if err != nil {
		return fail(err)
	}
	defer stopMeasured(proc, &r)
	m := measurement{pid: proc.Pid(), peer: k.gateway, pprof: ports.Pprof}
	var closeSink func()
	if m.sink, closeSink, err = openSink(ctx, es, j, k.brokers, &r); err != nil {
		return fail(err)
	}
	defer closeSink()
	var arrived arrivals
	if j.variant.DeliveryLatency {
		m.acks, m.arrived = filepath.Join(tmp, "acks"), &arrived
	}
	m.gen, m.genArgs = genCommand(o, j, &r, ports, m.acks)
	if o.warmup > 0 {
		if err := warmUp(ctx, o, j, m.gen, m.genArgs, m.sink); err != nil {
			return fail(err)
		}
	}
	if m.arrived != nil {
		es.OnSpan(m.arrived.record)
		defer es.OnSpan(nil)
	}
	if err := measureRun(ctx, o, es, j, &m, &r); err != nil {
		return fail(err)
	}
	return r
}

// openSink is where a run counts the spans that arrived: the stand-in, or for an agent Kafka's
// spans topic (r.Sink then says so). The function it returns closes it.
func openSink(ctx context.Context, es *esstandin.Server, j job, brokers []string, r *run) (sink, func(), error) {
	if j.variant.Kafka != kafkaAgent {
		return standin{es}, func() {}, nil
	}
	counter, err := newSpanCounter(ctx, brokers, spansTopic)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	r.Sink = sinkKafka
	return counter, counter.Close, nil
}

// measurement is what the measured window of a run works with.
type measurement struct {
	// gen and genArgs are tracegen's command line.
	gen     string
	genArgs []string
	sink    sink
	// pid is the measured collector's; peer, a tiers run's gateway, is also timed.
	pid   int
	peer  *collectorproc.Process
	pprof string // the measured collector's pprof address
	// acks and arrived, with delivery_latency, are tracegen's acknowledgement log and when each
	// span reached the stand-in.
	acks    string
	arrived *arrivals
}

// measureRun is the measured window: the load, the wait for the spans it should deliver, then
// the row's counts, rates, peak RSS, delivery times and late spans.
func measureRun(ctx context.Context, o options, es *esstandin.Server, j job, m *measurement, r *run) error {
	w := window{atStart: m.cpu()}
	if w.atStart.collectorErr != nil {
		return w.atStart.collectorErr
	}
	if o.esDown {
		if err := es.SetRefusing(true); err != nil {
			return err
		}
	}
	w.start = time.Now()
	// Waited for once the row is complete: a profile that outlasts the load must not lengthen the
	// window.
	defer startProfile(ctx, o, r, m.pprof)()
	gen, genErr := m.load(ctx, &w)
	if o.esDown {
		if err := es.SetRefusing(false); err != nil {
			return err
		}
	}
	if genErr != nil {
		return genErr
	}
	r.Gen = gen
	w.end = awaitExpected(ctx, o, m.sink, j, r, w.start)
	if w.atEnd = m.cpu(); w.atEnd.collectorErr != nil {
		return w.atEnd.collectorErr
	}
	r.setArrivals(es.Stats(), m.sink.spans())
	r.setRates(w)
	r.setPeakRSS(m.pid)
	if m.arrived != nil {
		es.OnSpan(nil)
		r.setDelivery(m.acks, m.arrived)
	}
	if r.expectsKeptOnly() && r.Error == "" {
		r.LateSpans = lateSpans(ctx, m.sink, r.SpansInES)
	}
	return nil
}

// load runs tracegen and notes in w when the load ended, the CPU at that moment and tracegen's.
func (m *measurement) load(ctx context.Context, w *window) (loadgen.Result, error) {
	gen, genCPU, err := runLoad(ctx, m.gen, m.genArgs)
	w.loadEnd = time.Now()
	w.atLoadEnd = m.cpu()
	w.genCPU = genCPU
	return gen, err
}

// cpuSample is the CPU time, in clock ticks, of the measured collector, this process (the
// stand-in, and Kafka when the run has it) and a tiers run's gateway (peer) at one moment. This
// process's is 0 when it could not be read, as the peer's then.
type cpuSample struct {
	collector, self, peer uint64
	collectorErr, peerErr error
}

// cpu reads the CPU time of the processes m times.
func (m *measurement) cpu() cpuSample {
	var c cpuSample
	c.collector, c.collectorErr = cpuTicks(m.pid)
	c.self, _ = cpuTicks(os.Getpid())
	if m.peer != nil {
		c.peer, c.peerErr = cpuTicks(m.peer.Pid())
	}
	return c
}

// window is the measured time of a run: the load from start to loadEnd, then the drain until
// end, when the last expected span arrived (or the wait gave up); the CPU times at those three
// moments, and tracegen's CPU over the load.
type window struct {
	start, loadEnd, end       time.Time
	atStart, atLoadEnd, atEnd cpuSample
	genCPU                    time.Duration
}

// awaitExpected waits for every span the run expects (acknowledged, or of a kept trace; UDP:
// every span sent) and returns when the last arrived; a wait that gave up is the run's error.
// The floor delivers nothing: its window ends with the load.
func awaitExpected(ctx context.Context, o options, s sink, j job, r *run, start time.Time) time.Time {
	if j.variant.settle > 0 {
		end, n := awaitSettled(ctx, s, j.variant.settle)
		r.ExpectedSpans = n
		return end
	}
	r.ExpectedSpans = expectedSpans(j.coll, j.variant, r.Gen)
	end, n, gaveUpWaiting := awaitSpans(ctx, o, s, r.ExpectedSpans, j.protocol, start)
	if gaveUpWaiting {
		r.Error = r.shortfall(n)
	}
	return end
}

// awaitSettled waits settle, then until no span has reached s for a second, and returns the time
// of the last arrival and the spans s holds.
func awaitSettled(ctx context.Context, s sink, settle time.Duration) (time.Time, int) {
	t := time.NewTimer(settle)
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	t.Stop()
	last, lastChange := s.spans(), time.Now()
	for ctx.Err() == nil && time.Since(lastChange) < time.Second {
		time.Sleep(100 * time.Millisecond)
		if n := s.spans(); n != last {
			last, lastChange = n, time.Now()
		}
	}
	return lastChange, last
}

// shortfall is the error of a run that gave up waiting with n of its expected spans arrived.
func (r *run) shortfall(n int) string {
	what, where := "acknowledged", "the stand-in"
	if r.expectsKeptOnly() {
		what = "kept"
	}
	if r.Sink == sinkKafka {
		where = "Kafka"
	}
	return fmt.Sprintf("%d of %d %s spans reached %s %s", n, r.ExpectedSpans, what, where, gaveUp)
}

// setArrivals records the spans in the run's sink and, from the stand-in's stats, the mean size
// of a span document, the duplicates and the bulk requests.
func (r *run) setArrivals(st esstandin.Stats, inSink int) {
	r.SpansInES = inSink
	if n := spansIn(st); n > 0 {
		r.SpanDocBytes = float64(st.SpanSourceBytes) / float64(n)
	}
	r.DuplicateSpans = st.DuplicateSpans
	r.BulkRequests = st.BulkRequests
}

// setRates derives the run's rates and CPU shares from w: over the whole window (first request to
// last span) and over the load alone, which a long drain does not dilute.
func (r *run) setRates(w window) {
	cpu0, cpuLoad, cpu1 := w.atStart.collector, w.atLoadEnd.collector, w.atEnd.collector
	self0, selfLoad, self1 := w.atStart.self, w.atLoadEnd.self, w.atEnd.self
	wall := w.end.Sub(w.start).Seconds()
	r.LastSpanSeconds = wall
	if wall > 0 {
		r.CPUPercent = 100 * float64(cpu1-cpu0) / clkTck / wall
		r.StandinCPUPercent = 100 * float64(self1-self0) / clkTck / wall
		r.GenCPUPercent = 100 * w.genCPU.Seconds() / wall
		r.E2ESpansPerSec = float64(r.SpansInES) / wall
		if w.atEnd.peerErr == nil {
			r.PeerCPUPercent = 100 * float64(w.atEnd.peer-w.atStart.peer) / clkTck / wall
		}
	}
	if r.CPUPercent > 0 {
		r.SpansPerCoreSec = r.E2ESpansPerSec / (r.CPUPercent / 100)
	}
	if cpuSeconds := float64(cpu1-cpu0) / clkTck; cpuSeconds > 0 {
		r.AcceptedSpansPerCoreSec = float64(r.Gen.SpansAcked) / cpuSeconds
	}
	r.LoadSeconds = w.loadEnd.Sub(w.start).Seconds()
	r.DrainSeconds = max(0, w.end.Sub(w.loadEnd).Seconds())
	if r.LoadSeconds > 0 {
		r.AcceptedSpansPerSec = float64(r.Gen.SpansAcked) / r.LoadSeconds
		if w.atLoadEnd.collectorErr == nil {
			r.LoadCPUPercent = 100 * float64(cpuLoad-cpu0) / clkTck / r.LoadSeconds
		}
		r.ClientLoadCPUPercent = 100 * (w.genCPU.Seconds() + float64(selfLoad-self0)/clkTck) / r.LoadSeconds
	}
}

// setPeakRSS records the collector's peak RSS; failing to read it is the run's error unless it
// has one already.
func (r *run) setPeakRSS(pid int) {
	if hwm, err := peakRSS(pid); err == nil {
		r.PeakRSSMB = float64(hwm) / 1024
	} else if r.Error == "" {
		r.Error = err.Error()
	}
}

// setDelivery times every span's arrival against its request's acknowledgement in tracegen's log.
func (r *run) setDelivery(acks string, arrived *arrivals) {
	ack, err := readAcks(acks)
	if err != nil {
		r.Error = cmp.Or(r.Error, err.Error())
		return
	}
	d := arrived.match(ack)
	r.Delivery = &d
}

// lateSpans counts the spans that reach s in the lateWindow after it held had.
func lateSpans(ctx context.Context, s sink, had int) int {
	select {
	case <-time.After(lateWindow):
	case <-ctx.Done():
	}
	return s.spans() - had
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
	r.setArrivals(st, spansIn(st))
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
	r.setPeakRSS(pid)
	return r
}
