package bufferprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// makeTraces returns one batch whose spans are named after ids, so deliveries can be checked span
// by span.
func makeTraces(ids ...int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for _, id := range ids {
		s := ss.Spans().AppendEmpty()
		s.SetName(strconv.Itoa(id))
		var sid [8]byte
		binary.BigEndian.PutUint64(sid[:], uint64(id)+1)
		s.SetSpanID(sid)
		s.SetTraceID([16]byte{1, sid[0], sid[1], sid[2], sid[3], sid[4], sid[5], sid[6], sid[7]})
	}
	return td
}

func rangeIDs(from, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = from + i
	}
	return ids
}

// livenessBound is how long a test waits for something the buffer must do before it fails: far
// above what any of it takes, so it only ends a test that would otherwise hang.
const livenessBound = 30 * time.Second

// progress lets a test wait for what the code under test does instead of sleeping: whatever
// records an event (a call to the next consumer, a timer made) bumps it, and a waiter checks its
// condition again at every bump.
type progress struct {
	mu sync.Mutex
	ch chan struct{}
}

func (p *progress) bump() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
}

// next returns a channel closed at the next bump. Take it before checking the condition, so that
// a bump in between is not missed.
func (p *progress) next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return p.ch
}

// waitFor returns once cond holds, checking it at every bump; it fails the test after livenessBound.
func (p *progress) waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	bound := time.NewTimer(livenessBound)
	defer bound.Stop()
	for {
		bumped := p.next()
		if cond() {
			return
		}
		select {
		case <-bumped:
		case <-bound.C:
			tb.Fatalf("%s: still not the case after %v", what, livenessBound)
		}
	}
}

// recorder is the next consumer: it records delivered span names and can fail or block.
type recorder struct {
	mu       sync.Mutex
	seen     map[string]int
	calls    []int // spans per successful call
	attempts []int // spans per call, failed or not
	failFn   func(call int) error
	n        atomic.Int64
	gate     chan struct{} // when non-nil, every call waits for it (or the context)
	// inCall and maxInCall are the calls in progress, and the most there ever were at once.
	inCall, maxInCall atomic.Int64
	// events is bumped when a call begins and when it returns.
	events progress
}

func newRecorder() *recorder { return &recorder{seen: map[string]int{}} }

func (r *recorder) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *recorder) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	raiseMax(&r.maxInCall, r.inCall.Add(1))
	call := int(r.n.Add(1))
	r.mu.Lock()
	r.attempts = append(r.attempts, td.SpanCount())
	r.mu.Unlock()
	r.events.bump()
	defer func() {
		r.inCall.Add(-1)
		r.events.bump()
	}()
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if r.failFn != nil {
		if err := r.failFn(call); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, td.SpanCount())
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				r.seen[spans.At(k).Name()]++
			}
		}
	}
	return nil
}

// attemptSizes returns the span count of every call so far, failed or not.
func (r *recorder) attemptSizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.attempts)
}

func (r *recorder) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func (r *recorder) waitDistinct(tb testing.TB, n int) {
	tb.Helper()
	r.events.waitFor(tb, fmt.Sprintf("%d distinct spans delivered", n), func() bool { return r.distinct() >= n })
}

// waitFirstCall waits until the next consumer was called (the call may still be in progress).
func (r *recorder) waitFirstCall(tb testing.TB) {
	tb.Helper()
	r.events.waitFor(tb, "a call", func() bool { return r.n.Load() > 0 })
}

// checkAll asserts that every id in ids was delivered, and returns the number of duplicates.
func (r *recorder) checkAll(t *testing.T, ids []int) (dups int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		c := r.seen[strconv.Itoa(id)]
		if c == 0 {
			t.Fatalf("span %d was acknowledged but never delivered", id)
		}
		dups += c - 1
	}
	return dups
}

var errDown = errors.New("elasticsearch is down") // retryable: not consumererror.Permanent

func memCfg() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Retry = RetryConfig{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond}
	return cfg
}

// overflowCfgIf is diskCfg in overflow mode without fsync when withStorage, else memCfg.
func overflowCfgIf(withStorage bool, dir string) *Config {
	if withStorage {
		return diskCfg(dir, ModeOverflow, FsyncNever)
	}
	return memCfg()
}

func diskCfg(dir, mode, fsync string) *Config {
	cfg := memCfg()
	s := defaultStorage()
	s.Directory, s.Mode, s.Fsync, s.FsyncInterval = dir, mode, fsync, 5*time.Millisecond
	s.CapacityMiB = 64
	cfg.Storage = configoptional.Some(s)
	return cfg
}

// harness is a started processor with its telemetry.
type harness struct {
	p   tracesBuffer
	tel *componenttest.Telemetry
}

// start starts a traces buffer; opts change it before Start (withClock, say).
func start(t *testing.T, cfg *Config, next consumer.Traces, fs diskqueue.FS, opts ...func(*timing)) *harness {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	p, err := newTracesBuffer(set, cfg, next)
	require.NoError(t, err)
	if fs != nil {
		p.fs = fs
	}
	for _, o := range opts {
		o(&p.timing)
	}
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	return &harness{p: p, tel: tel}
}

func (h *harness) shutdown(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.p.Shutdown(ctx))
}

// shutdownReturns runs Shutdown and fails the test if it has not returned after 30 s: for tests
// whose deliveries hang until a deadline cancels them, where a Shutdown that ignored the deadline
// would otherwise hold the test until the package's timeout. 30 s is a liveness bound, far above
// the deadlines these tests set (100–200 ms), not a measure of speed.
func shutdownReturns(ctx context.Context, t *testing.T, h *harness) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.p.Shutdown(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown did not return: the shutdown deadline did not end the deliveries")
		return nil
	}
}

// requireMetricDefined fails the test unless metadata.yaml defines the telemetry metric name.
func requireMetricDefined(t *testing.T, name string) {
	t.Helper()
	b, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	require.Contains(t, string(b), "\n    "+name+":\n", "metadata.yaml defines no metric %q", name)
}

// sum returns a counter's value, for the data points whose attributes contain attr ("" = all).
func (h *harness) sum(t *testing.T, name, reason string) int64 {
	t.Helper()
	m, err := h.tel.GetMetric("otelcol_" + name)
	if err != nil {
		// Never recorded: 0, but only for a metric the processor has, so that a misspelled or
		// renamed name fails instead of passing every assert.Zero.
		requireMetricDefined(t, name)
		return 0
	}
	var total int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, ok := dp.Attributes.Value("reason"); reason == "" || (ok && v.AsString() == reason) {
			total += dp.Value
		}
	}
	return total
}

// noSpaceFS is a file system whose writes fail with ENOSPC once budget bytes were written.
type noSpaceFS struct{ budget atomic.Int64 }

func (fs *noSpaceFS) OpenFile(name string, flag int, perm os.FileMode) (diskqueue.File, error) {
	f, err := diskqueue.OS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &noSpaceFile{File: f, fs: fs}, nil
}

func (*noSpaceFS) Remove(name string) error { return os.Remove(name) }

type noSpaceFile struct {
	diskqueue.File
	fs *noSpaceFS
}

func (f *noSpaceFile) Write(b []byte) (int, error) {
	if f.fs.budget.Add(-int64(len(b))) < 0 {
		return 0, fmt.Errorf("write: %w", syscall.ENOSPC)
	}
	return f.File.Write(b)
}

// startB starts a processor for a benchmark (nil next: a nop consumer).
func startB(b *testing.B, cfg *Config, next consumer.Traces) *harness {
	b.Helper()
	if next == nil {
		next = consumertest.NewNop()
	}
	require.NoError(b, cfg.Validate())
	p, err := newTracesBuffer(processortest.NewNopSettings(metadata.Type), cfg, next)
	require.NoError(b, err)
	require.NoError(b, p.Start(context.Background(), componenttest.NewNopHost()))
	return &harness{p: p}
}

func (h *harness) shutdownB(b *testing.B) {
	b.Helper()
	require.NoError(b, h.p.Shutdown(context.Background()))
}

// withClock runs the buffer on c.
func withClock(c clock) func(*timing) { return func(tm *timing) { tm.clock = c } }

// gatedSyncFS is a file system whose segment fsyncs wait until the test opens the gate, so that
// appends overlap while one of them is in its fsync.
type gatedSyncFS struct {
	gate    chan struct{}
	syncing atomic.Int64 // fsyncs waiting at the gate
	events  progress     // bumped when an fsync reaches the gate and after every segment write
}

func newGatedSyncFS() *gatedSyncFS { return &gatedSyncFS{gate: make(chan struct{})} }

func (fs *gatedSyncFS) OpenFile(name string, flag int, perm os.FileMode) (diskqueue.File, error) {
	f, err := diskqueue.OS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &gatedSyncFile{File: f, fs: fs, segment: filepath.Ext(name) == ".seg"}, nil
}

func (*gatedSyncFS) Remove(name string) error { return os.Remove(name) }

type gatedSyncFile struct {
	diskqueue.File
	fs      *gatedSyncFS
	segment bool
}

func (f *gatedSyncFile) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	if f.segment {
		f.fs.events.bump()
	}
	return n, err
}

func (f *gatedSyncFile) Sync() error {
	if f.segment {
		f.fs.syncing.Add(1)
		f.fs.events.bump()
		<-f.fs.gate
		f.fs.syncing.Add(-1)
	}
	return f.File.Sync()
}

// orderFS records, in order, the writes and fsyncs of segment (.seg) and ack (.ack) files.
type orderFS struct {
	mu     sync.Mutex
	events []string // "write .seg", "sync .ack", …
}

func (fs *orderFS) OpenFile(name string, flag int, perm os.FileMode) (diskqueue.File, error) {
	f, err := diskqueue.OS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &orderFile{File: f, fs: fs, kind: filepath.Ext(name)}, nil
}

func (*orderFS) Remove(name string) error { return os.Remove(name) }

func (fs *orderFS) record(e string) {
	fs.mu.Lock()
	fs.events = append(fs.events, e)
	fs.mu.Unlock()
}

type orderFile struct {
	diskqueue.File
	fs   *orderFS
	kind string
}

func (f *orderFile) Write(b []byte) (int, error) {
	f.fs.record("write " + f.kind)
	return f.File.Write(b)
}

func (f *orderFile) Sync() error {
	f.fs.record("sync " + f.kind)
	return f.File.Sync()
}

// raiseMax sets *m to n if n is larger, for the tests that record how many calls overlapped.
func raiseMax(m *atomic.Int64, n int64) {
	for {
		cur := m.Load()
		if n <= cur || m.CompareAndSwap(cur, n) {
			return
		}
	}
}
