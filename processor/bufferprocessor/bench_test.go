package bufferprocessor

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/ptrace"

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
	h := startB(b, func() *Config { c := memCfg(); c.Buffer = 1_000_000; return c }(), nil)
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
		b.Run(fmt.Sprintf("engine=segmentlog/fsync=%s", []string{"always", "interval", "never"}[fsync]), func(b *testing.B) {
			l, _, err := diskqueue.Open(diskqueue.Options{Dir: b.TempDir(), CapacityBytes: 4 << 30, Fsync: fsync, FsyncInterval: 100 * time.Millisecond})
			require.NoError(b, err)
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			for range b.N {
				if _, _, err := l.Append(payload, 2048, time.Now(), false); err != nil {
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
				key := fmt.Sprintf("%d", i)
				binary.LittleEndian.PutUint64(meta, uint64(i)) //nolint:gosec // benchmark index
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
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = b.TempDir()
	cfg.FSync = fsync
	ext, err := f.Create(context.Background(), extension.Settings{
		ID: component.NewID(f.Type()), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo(),
	}, cfg)
	require.NoError(b, err)
	require.NoError(b, ext.Start(context.Background(), componenttest.NewNopHost()))
	client, err := ext.(storage.Extension).GetClient(context.Background(), component.KindExporter, component.MustNewID("elasticsearch"), "traces")
	require.NoError(b, err)
	b.Cleanup(func() {
		require.NoError(b, client.Close(context.Background()))
		require.NoError(b, ext.Shutdown(context.Background()))
	})
	return client
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
		_, _, err := l.Append(payload, 100, time.Now(), false)
		require.NoError(b, err)
	}
	require.NoError(b, l.Close())
	b.SetBytes(int64(len(payload)))
	sink := new(consumertest.TracesSink)
	b.ResetTimer()
	h := startB(b, diskCfg(dir, ModeWriteAhead, FsyncInterval), sink)
	for sink.SpanCount() < b.N*100 {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	h.shutdownB(b)
}
