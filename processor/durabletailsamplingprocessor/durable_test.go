package durabletailsamplingprocessor

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/metadatatest"
)

func durableConfig(t *testing.T, dir string) *Config {
	cfg := testConfig(errorsOnly)
	cfg.Storage.Directory = dir
	cfg.Storage.Fsync = "always"
	cfg.Storage.SegmentMiB = 1
	cfg.Storage.CapacityMiB = 8
	if dir == "" {
		cfg.Storage.Directory = t.TempDir()
	}
	return cfg
}

// A crash (the processor abandoned without Shutdown) keeps every acknowledged pending span: the
// next process decides them and passes the kept traces on whole.
func TestPendingTracesSurviveACrash(t *testing.T) {
	cfg := durableConfig(t, "")
	first := &recordingSink{}
	p := newTestProcessor(t, cfg, first)
	ctx := context.Background()
	require.NoError(t, p.ConsumeTraces(ctx, request("api", spanSpec{1, 0, false}, spanSpec{2, 0, false}, spanSpec{3, 0, true})))
	require.NoError(t, p.ConsumeTraces(ctx, request("db", spanSpec{1, 1, true}, spanSpec{2, 1, false})))
	p.step(t0.Add(10 * time.Second)) // all three decided; 1 and 3 passed on
	require.Equal(t, map[pcommon.TraceID]int{traceID(1): 2, traceID(3): 1}, first.kept())
	require.NoError(t, p.ConsumeTraces(ctx, request("api", spanSpec{4, 0, true}, spanSpec{5, 0, false})))
	require.NoError(t, p.ConsumeTraces(ctx, request("db", spanSpec{4, 1, false})))
	// crash: no Shutdown

	second := &recordingSink{}
	q := newTestProcessor(t, cfg, second)
	assert.EqualValues(t, 2, q.gaugeTraces.Load(), "traces 4 and 5 pending again; 1-3 recorded as done")
	q.step(t0.Add(10 * time.Second))
	assert.Equal(t, map[pcommon.TraceID]int{traceID(4): 2}, second.kept(), "kept whole, nothing passed on twice")
	require.NoError(t, q.Shutdown(ctx))
}

// A kept trace the next consumer refused is not done: after a crash it is decided and passed on.
func TestRefusedKeptTraceSurvivesACrash(t *testing.T) {
	cfg := durableConfig(t, "")
	p := newTestProcessor(t, cfg, &recordingSink{refuse: errRefused})
	require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{1, 0, true}, spanSpec{1, 1, false})))
	p.step(t0.Add(10 * time.Second))

	second := &recordingSink{}
	q := newTestProcessor(t, cfg, second)
	q.step(t0.Add(10 * time.Second))
	assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 2}, second.kept())
}

// Shutdown with storage leaves pending traces on disk for the next process.
func TestShutdownWithStorageKeepsPendingOnDisk(t *testing.T) {
	cfg := durableConfig(t, "")
	first := &recordingSink{}
	p := newTestProcessor(t, cfg, first)
	require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{1, 0, true})))
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Empty(t, first.kept())

	second := &recordingSink{}
	q := newTestProcessor(t, cfg, second)
	q.step(t0.Add(10 * time.Second))
	assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 1}, second.kept())
	require.NoError(t, q.Shutdown(context.Background()))
}

// Disk is reclaimed as traces are decided: after many decided traces, the log is back to a
// segment or two.
func TestDiskIsReclaimed(t *testing.T) {
	cfg := durableConfig(t, "")
	p := newTestProcessor(t, cfg, &recordingSink{})
	pad := string(make([]byte, 8<<10))
	for i := range 400 { // ~3 MiB over 1 MiB segments
		td := request("api", spanSpec{byte(i), 0, i%7 == 0}, spanSpec{byte(i), 1, false})
		td.ResourceSpans().At(0).Resource().Attributes().PutStr("padding", pad)
		require.NoError(t, p.ConsumeTraces(context.Background(), td))
		p.step(t0.Add(time.Duration(i) * time.Second))
	}
	p.step(t0.Add(time.Hour))
	files, err := filepath.Glob(filepath.Join(cfg.Storage.Directory, "*"))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(files), 2, "%v", files)
	assert.Less(t, p.diskBytes(), int64(2<<20))
	require.NoError(t, p.Shutdown(context.Background()))
}

// A full disk refuses requests with a retryable error, counted.
func TestDiskFullRefuses(t *testing.T) {
	cfg := durableConfig(t, "")
	cfg.Storage.CapacityMiB = 2
	cfg.MaxPendingMiB = 64
	p := newTestProcessor(t, cfg, &recordingSink{})
	pad := string(make([]byte, 64<<10))
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		td := request("api", spanSpec{byte(i), 0, false})
		td.ResourceSpans().At(0).Resource().Attributes().PutStr("padding", pad)
		err = p.ConsumeTraces(context.Background(), td)
	}
	require.ErrorContains(t, err, reasonDiskFull)
	require.NoError(t, p.Shutdown(context.Background()))
}

// An unreadable directory is an error at start, not a crash later.
func TestUnusableDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cfg := durableConfig(t, filepath.Join(file, "sub"))
	p, err := newTailProcessor(processortestSettings(), cfg, &recordingSink{})
	require.NoError(t, err)
	assert.ErrorContains(t, p.Start(context.Background(), nil), "opening the pending spans' log")
}

// A damaged log loses the spans in the damage, counted in damaged_bytes at start.
func TestDamagedLogIsCounted(t *testing.T) {
	cfg := durableConfig(t, "")
	p := newTestProcessor(t, cfg, &recordingSink{})
	require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{1, 0, true})))
	require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{2, 0, true})))
	files, err := filepath.Glob(filepath.Join(cfg.Storage.Directory, "*.tlog"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	b[len(b)-5] ^= 0xff // inside the second record: its checksum fails
	require.NoError(t, os.WriteFile(files[0], b, 0o600))

	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	q, err := newTailProcessor(metadatatest.NewSettings(tel), cfg, &recordingSink{})
	require.NoError(t, err)
	require.NoError(t, q.openLog())
	assert.EqualValues(t, 1, q.gaugeTraces.Load(), "the first trace is recovered")
	metadatatest.AssertEqualProcessorDurableTailSamplingDamagedBytes(t, tel, []metricdata.DataPoint[int64]{
		// The segment after its header (8 bytes) and first record (9-byte header and payload).
		{Value: int64(len(b)) - (8 + 9 + int64(binary.LittleEndian.Uint32(b[8:12])))},
	}, metricdatatest.IgnoreTimestamp())
	require.NoError(t, q.Shutdown(context.Background()))
}
