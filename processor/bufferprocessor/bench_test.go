package bufferprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/internal/testbed/cpubench"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// benchTraces is a batch of n spans with a few attributes each (~250 bytes per span serialized).
func benchTraces(n int) ptrace.Traces {
	td := makeTraces(rangeIDs(0, n)...)
	rs := td.ResourceSpans().At(0)
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	spans := rs.ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		a := spans.At(i).Attributes()
		a.PutStr("http.route", "/api/v1/orders/{id}")
		a.PutStr("http.method", "POST")
		a.PutInt("http.status_code", 200)
		a.PutStr("db.statement", "SELECT * FROM orders WHERE id = ? AND customer = ? LIMIT 1")
	}
	return td
}

// BenchmarkConsumeTracesMemory: time inside ConsumeTraces in memory mode (100-span batches).
func BenchmarkConsumeTracesMemory(b *testing.B) {
	h := startB(b, func() *Config { c := memCfg(); c.QueueSize = 1_000_000; return c }(), nil)
	td := benchTraces(100)
	batches := make([]ptrace.Traces, 1024)
	for i := range batches {
		batches[i] = ptrace.NewTraces()
		td.CopyTo(batches[i])
	}
	b.ResetTimer()
	for i := range b.N {
		if err := h.p.ConsumeTraces(context.Background(), batches[i%len(batches)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	h.shutdownB(b)
}

// BenchmarkWriteAhead: ConsumeTraces throughput in write_ahead mode, parallel producers, nop next
// consumer (2048-span batches, ~500 KB each).
func BenchmarkWriteAhead(b *testing.B) {
	for _, fsync := range []string{FsyncInterval, FsyncAlways} {
		b.Run("fsync="+fsync, func(b *testing.B) {
			cfg := diskCfg(b.TempDir(), ModeWriteAhead, fsync)
			cfg.Storage.Get().FsyncInterval = 100 * time.Millisecond
			cfg.Storage.Get().CapacityMiB = 4096
			h := startB(b, cfg, nil)
			td := benchTraces(2048)
			var m ptrace.ProtoMarshaler
			b.SetBytes(int64(m.TracesSize(td)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c := ptrace.NewTraces()
					td.CopyTo(c)
					if err := h.p.ConsumeTraces(context.Background(), c); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			h.shutdownB(b)
		})
	}
}

// BenchmarkDiskEngine compares the engines side by side with the persistent queue's access
// pattern: put (metadata + item), get (metadata + item), delete after delivery (metadata +
// delete). One op = one record through its whole life; SetBytes = the record's size.
func BenchmarkDiskEngine(b *testing.B) {
	var m ptrace.ProtoMarshaler
	payload, err := m.MarshalTraces(benchTraces(2048))
	require.NoError(b, err)
	for _, fsync := range []diskqueue.FsyncPolicy{diskqueue.FsyncInterval, diskqueue.FsyncAlways} {
		b.Run("engine=segmentlog/fsync="+[]string{"always", "interval", "never"}[fsync], func(b *testing.B) {
			l, _, err := diskqueue.Open(diskqueue.Options{Dir: b.TempDir(), CapacityBytes: 4 << 30, Fsync: fsync, FsyncInterval: 100 * time.Millisecond})
			require.NoError(b, err)
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			for range b.N {
				if _, _, err := l.Append(payload, 2048, time.Now(), diskqueue.NoClaim); err != nil {
					b.Fatal(err)
				}
				r, ok, err := l.Next()
				if err != nil || !ok {
					b.Fatal(err, ok)
				}
				if err := l.Ack([]diskqueue.Pos{r.Pos}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			require.NoError(b, l.Close())
		})
	}
	for _, fsync := range []bool{false, true} {
		b.Run(fmt.Sprintf("engine=file_storage/fsync=%v", fsync), func(b *testing.B) {
			client := fileStorageClient(b, fsync)
			ctx := context.Background()
			meta := make([]byte, 8)
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			for i := range b.N {
				key := strconv.Itoa(i)
				binary.LittleEndian.PutUint64(meta, uint64(i))
				if err := client.Batch(ctx, storage.SetOperation("qm", meta), storage.SetOperation(key, payload)); err != nil {
					b.Fatal(err)
				}
				get := storage.GetOperation(key)
				if err := client.Batch(ctx, storage.SetOperation("qm", meta), get); err != nil || len(get.Value) != len(payload) {
					b.Fatal(err)
				}
				if err := client.Batch(ctx, storage.SetOperation("qm", meta), storage.DeleteOperation(key)); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
		})
	}
}

func fileStorageClient(b *testing.B, fsync bool) storage.Client {
	b.Helper()
	ext := fileStorageExtension(b, fsync)
	client, err := ext.(storage.Extension).GetClient(context.Background(), component.KindExporter, component.MustNewID("elasticsearch"), "traces")
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, client.Close(context.Background())) })
	return client
}

// fileStorageExtension starts the contrib file_storage extension (bbolt) in a fresh directory.
func fileStorageExtension(b *testing.B, fsync bool) extension.Extension {
	b.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = b.TempDir()
	cfg.FSync = fsync
	ext, err := f.Create(context.Background(), extension.Settings{
		ID: component.NewID(f.Type()), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo(),
	}, cfg)
	require.NoError(b, err)
	require.NoError(b, ext.Start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, ext.Shutdown(context.Background())) })
	return ext
}

// BenchmarkReplayDrain: a restart finds b.N batches (100 spans each) on disk; time until the
// workers (threads=8) delivered them all to a nop consumer.
func BenchmarkReplayDrain(b *testing.B) {
	dir := b.TempDir()
	var m ptrace.ProtoMarshaler
	payload, err := m.MarshalTraces(benchTraces(100))
	require.NoError(b, err)
	l, _, err := diskqueue.Open(diskqueue.Options{Dir: dir, CapacityBytes: 8 << 30, Fsync: diskqueue.FsyncNever})
	require.NoError(b, err)
	for range b.N {
		_, _, err := l.Append(payload, 100, time.Now(), diskqueue.NoClaim)
		require.NoError(b, err)
	}
	require.NoError(b, l.Close())
	b.SetBytes(int64(len(payload)))
	sink := newSinkCount()
	b.ResetTimer()
	h := startB(b, diskCfg(dir, ModeWriteAhead, FsyncInterval), sink)
	sink.waitSpans(int64(b.N) * 100)
	b.StopTimer()
	h.shutdownB(b)
}

// percentile returns the q-quantile (0..1) of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// BenchmarkConsumeTracesLatency: the distribution of the time inside ConsumeTraces with 8
// concurrent producers of 100-span batches and a next consumer that only counts (threads=8). Every
// call is timed; p50/p99/p99.9/max are reported in µs. A refusal (full buffer) would be counted
// and retried; there are none in these runs. overflow_next_down is Elasticsearch down: the next
// consumer fails every delivery, the memory queue (100 batches) fills, and every later batch goes
// to disk (overflow, fsync every 100 ms) while the workers retry.
func BenchmarkConsumeTracesLatency(b *testing.B) {
	const producers, perBatch = 8, 100
	for _, mode := range []string{"memory", "write_ahead_interval", "overflow_next_down"} {
		b.Run("mode="+mode, func(b *testing.B) {
			cfg := memCfg()
			cfg.QueueSize = 100_000
			switch mode {
			case "write_ahead_interval":
				cfg = diskCfg(b.TempDir(), ModeWriteAhead, FsyncInterval)
				cfg.QueueSize = 100_000
			case "overflow_next_down":
				cfg = diskCfg(b.TempDir(), ModeOverflow, FsyncInterval)
				cfg.QueueSize = 100
			}
			if cfg.Storage.HasValue() {
				cfg.Storage.Get().FsyncInterval = 100 * time.Millisecond
				cfg.Storage.Get().CapacityMiB = 4096
			}
			cfg.Threads = 8
			sink := newSinkCount()
			var downstream consumer.Traces = sink
			if mode == "overflow_next_down" {
				downstream = consumerFunc(func(context.Context, ptrace.Traces) error { return errDown })
			}
			h := startB(b, cfg, downstream)
			pools := make([][]ptrace.Traces, producers)
			for i := range pools {
				pools[i] = make([]ptrace.Traces, 16)
				for j := range pools[i] {
					pools[i][j] = benchTraces(perBatch)
				}
			}
			durations := make([][]time.Duration, producers)
			var next, refused atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for g := range producers {
				wg.Go(func() {
					ds := make([]time.Duration, 0, b.N/producers+1)
					for i := 0; next.Add(1) <= int64(b.N); i++ {
						for {
							t0 := time.Now()
							err := h.p.ConsumeTraces(context.Background(), pools[g][i%len(pools[g])])
							ds = append(ds, time.Since(t0))
							if err == nil {
								break
							}
							if !errors.Is(err, ErrFull) {
								b.Error(err)
								return
							}
							refused.Add(1)
							time.Sleep(time.Millisecond)
						}
					}
					durations[g] = ds
				})
			}
			wg.Wait()
			b.StopTimer()
			if mode != "overflow_next_down" {
				sink.waitSpans(int64(b.N) * perBatch)
			}
			h.shutdownB(b)
			all := slices.Concat(durations...)
			slices.Sort(all)
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			b.ReportMetric(us(percentile(all, 0.50)), "p50-µs")
			b.ReportMetric(us(percentile(all, 0.99)), "p99-µs")
			b.ReportMetric(us(percentile(all, 0.999)), "p99.9-µs")
			b.ReportMetric(us(all[len(all)-1]), "max-µs")
			b.ReportMetric(float64(refused.Load()), "refusals")
		})
	}
}

// BenchmarkReplayVsLive: the same records (2048 spans, ~415 KB each), threads=8, the same next
// consumer; time until all of them were delivered:
//
//	live-otlp:  8 producers decode each record from its OTLP protobuf bytes (what a receiver does
//	            before ConsumeTraces) and push it through ConsumeTraces, write_ahead, fsync interval
//	live-pdata: the same, but handing in an already decoded batch (no receiver work at all)
//	replay:     the records are on disk at Start (after a restart); the workers read and decode them
//
// One op = the three. next=nop only counts spans; next=10ms stands in for a bulk round trip, so
// the drain rate shows how many deliveries are in flight; next=elasticsearch is the contrib
// exporter (sending_queue disabled) against the fake bulk responder in a child process.
// max-in-flight is the largest number of concurrent deliveries the next consumer saw.
func BenchmarkReplayVsLive(b *testing.B) {
	const spansPer, producers = 2048, 8
	td := benchTraces(spansPer)
	var m ptrace.ProtoMarshaler
	payload, err := m.MarshalTraces(td)
	require.NoError(b, err)
	for _, next := range []string{"nop", "10ms", "elasticsearch"} {
		b.Run("next="+next, func(b *testing.B) {
			records := 64
			var delay time.Duration
			var exp consumer.Traces
			switch next {
			case "10ms":
				delay = 10 * time.Millisecond
			case "elasticsearch":
				records = 32
				exp = newBenchESExporter(b, cpubench.StartFakeES(b))
			}
			cfgFor := func(dir string) *Config {
				cfg := diskCfg(dir, ModeWriteAhead, FsyncInterval)
				cfg.Storage.Get().FsyncInterval = 100 * time.Millisecond
				cfg.Storage.Get().CapacityMiB = 1024
				cfg.Threads = 8
				return cfg
			}
			live := func(decode bool) (time.Duration, int64) {
				sink := newSinkCountTo(delay, exp)
				h := startB(b, cfgFor(b.TempDir()), sink)
				defer h.shutdownB(b)
				t0 := time.Now()
				var n atomic.Int64
				var wg sync.WaitGroup
				for range producers {
					wg.Go(func() {
						var u ptrace.ProtoUnmarshaler
						for n.Add(1) <= int64(records) {
							batch := td
							if decode {
								var err error
								if batch, err = u.UnmarshalTraces(payload); err != nil {
									b.Error(err)
									return
								}
							}
							if err := h.p.ConsumeTraces(context.Background(), batch); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				sink.waitSpans(int64(records * spansPer))
				return time.Since(t0), sink.maxInFlight.Load()
			}
			replay := func() (time.Duration, int64) {
				dir := b.TempDir()
				l, _, err := diskqueue.Open(diskqueue.Options{Dir: dir, CapacityBytes: 1 << 30, Fsync: diskqueue.FsyncNever})
				require.NoError(b, err)
				for range records {
					_, _, err := l.Append(payload, spansPer, time.Now(), diskqueue.NoClaim)
					require.NoError(b, err)
				}
				require.NoError(b, l.Close())
				sink := newSinkCountTo(delay, exp)
				t0 := time.Now()
				h := startB(b, cfgFor(dir), sink)
				defer h.shutdownB(b)
				sink.waitSpans(int64(records * spansPer))
				return time.Since(t0), sink.maxInFlight.Load()
			}
			var tOTLP, tPdata, tReplay time.Duration
			var maxLive, maxReplay int64
			b.ResetTimer()
			for range b.N {
				d, mx := live(true)
				tOTLP, maxLive = tOTLP+d, max(maxLive, mx)
				d, mx = live(false)
				tPdata, maxLive = tPdata+d, max(maxLive, mx)
				d, mx = replay()
				tReplay, maxReplay = tReplay+d, max(maxReplay, mx)
			}
			b.StopTimer()
			total := float64(b.N * records)
			mb := total * float64(len(payload)) / 1e6
			b.ReportMetric(total*spansPer/tOTLP.Seconds(), "spans/s-live-otlp")
			b.ReportMetric(total*spansPer/tPdata.Seconds(), "spans/s-live-pdata")
			b.ReportMetric(total*spansPer/tReplay.Seconds(), "spans/s-replay")
			b.ReportMetric(mb/tOTLP.Seconds(), "MB/s-live-otlp")
			b.ReportMetric(mb/tPdata.Seconds(), "MB/s-live-pdata")
			b.ReportMetric(mb/tReplay.Seconds(), "MB/s-replay")
			b.ReportMetric(tOTLP.Seconds()/tReplay.Seconds(), "replay/live-otlp")
			b.ReportMetric(tPdata.Seconds()/tReplay.Seconds(), "replay/live-pdata")
			b.ReportMetric(float64(maxLive), "max-in-flight-live")
			b.ReportMetric(float64(maxReplay), "max-in-flight-replay")
		})
	}
}

// extHost is a component.Host holding extensions (the persistent queue looks its storage up there).
type extHost map[component.ID]component.Component

func (h extHost) GetExtensions() map[component.ID]component.Component { return h }

// newPersistentQueueExporter is the exporter helper (v0.148.0) with a persistent sending_queue on
// file_storage, as `sending_queue: {storage: file_storage, num_consumers: 8, batch: none}` would
// configure it, pushing to next. No retry or timeout sender: next never fails.
func newPersistentQueueExporter(b *testing.B, fsync bool, consumers int, next consumer.Traces) exporter.Traces {
	b.Helper()
	storageID := component.MustNewID("file_storage")
	host := extHost{storageID: fileStorageExtension(b, fsync)}
	qcfg := exporterhelper.NewDefaultQueueConfig()
	qcfg.Batch = configoptional.None[exporterhelper.BatchConfig]()
	qcfg.NumConsumers = consumers
	qcfg.QueueSize = 100_000 // requests
	qcfg.BlockOnOverflow = true
	qcfg.StorageID = &storageID
	exp, err := exporterhelper.NewTraces(context.Background(), exporter.Settings{
		ID: component.MustNewID("elasticsearch"), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo(),
	}, &struct{}{}, next.ConsumeTraces, exporterhelper.WithQueue(configoptional.Some(qcfg)))
	require.NoError(b, err)
	require.NoError(b, exp.Start(context.Background(), host))
	b.Cleanup(func() { require.NoError(b, exp.Shutdown(context.Background())) })
	return exp
}

// BenchmarkPersistentQueue: the exporter helper's real persistent queue on file_storage against
// the buffer in write_ahead mode, side by side, same records (2048 spans, ~415 KB), 8 producers
// calling ConsumeTraces, 8 consumers/threads, a next consumer that only counts. One op = 32 records
// through each, from the first ConsumeTraces until the last span was delivered.
//
//	durability=os:    file_storage fsync false (bbolt NoSync: never fsyncs) / buffer fsync interval (100ms)
//	durability=fsync: file_storage fsync true (fsync per transaction)        / buffer fsync always
func BenchmarkPersistentQueue(b *testing.B) {
	const records, spansPer, producers, consumers = 32, 2048, 8, 8
	td := benchTraces(spansPer)
	var m ptrace.ProtoMarshaler
	size := float64(m.TracesSize(td))
	for _, durable := range []bool{false, true} {
		name := "durability=os"
		if durable {
			name = "durability=fsync"
		}
		b.Run(name, func(b *testing.B) {
			pqSink := newSinkCount()
			pq := newPersistentQueueExporter(b, durable, consumers, pqSink)
			fsync := FsyncInterval
			if durable {
				fsync = FsyncAlways
			}
			cfg := diskCfg(b.TempDir(), ModeWriteAhead, fsync)
			cfg.Storage.Get().FsyncInterval = 100 * time.Millisecond
			cfg.Storage.Get().CapacityMiB = 1024
			cfg.Threads = consumers
			bufSink := newSinkCount()
			h := startB(b, cfg, bufSink)
			defer h.shutdownB(b)

			run := func(in consumer.Traces, sink *sinkCount) time.Duration {
				want := sink.spans() + records*spansPer
				t0 := time.Now()
				var next atomic.Int64
				var wg sync.WaitGroup
				for range producers {
					wg.Go(func() {
						for next.Add(1) <= records {
							if err := in.ConsumeTraces(context.Background(), td); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				sink.waitSpans(want)
				return time.Since(t0)
			}
			var tq, tb time.Duration
			b.ResetTimer()
			for range b.N {
				tq += run(pq, pqSink)
				tb += run(h.p, bufSink)
			}
			b.StopTimer()
			bytes := float64(b.N*records) * size / 1e6
			b.ReportMetric(bytes/tq.Seconds(), "MB/s-persistent_queue")
			b.ReportMetric(bytes/tb.Seconds(), "MB/s-buffer")
			b.ReportMetric(tq.Seconds()/tb.Seconds(), "buffer/persistent_queue")
		})
	}
}
