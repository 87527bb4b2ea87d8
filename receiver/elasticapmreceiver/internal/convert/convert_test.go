package convert

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"
)

// edotBatchSize is the batch size of EDOT's receiver: its golden files hold what its first
// ConsumeX call received, i.e. the first batch of a request.
const edotBatchSize = 10

// decodeFile converts testdata/edot/<name>.ndjson in batches of batchSize, returning one Output
// per batch.
func decodeFile(t *testing.T, name string, batchSize int) []*Output {
	t.Helper()
	return decodeFileWith(t, name, batchSize, Options{})
}

func decodeFileWith(t *testing.T, name string, batchSize int, opts Options) []*Output {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "edot", name+".ndjson"))
	require.NoError(t, err)
	conv := NewConverter(zap.NewNop(), opts) // zero Options: EDOT's output
	var outs []*Output
	proc := elasticapm.NewProcessor(elasticapm.Config{MaxEventSize: 1 << 20, Semaphore: semaphore.NewWeighted(1)})
	var result elasticapm.Result
	err = proc.HandleStream(context.Background(), &modelpb.APMEvent{Event: &modelpb.Event{}}, bytes.NewReader(body), batchSize,
		modelpb.ProcessBatchFunc(func(ctx context.Context, b *modelpb.Batch) error {
			out := NewOutput()
			outs = append(outs, out)
			return conv.Append(ctx, b, out)
		}), &result)
	require.NoError(t, err)
	require.Empty(t, result.Errors)
	return outs
}

// TestSameAsEDOT converts the inputs of EDOT's receiver tests and compares with EDOT's expected
// output (testdata/edot, copied from elasticapmintakereceiver v0.36.0 unchanged).
func TestSameAsEDOT(t *testing.T) {
	for _, name := range []string{
		"invalid_ids", "transactions", "spans", "unknown-span-type", "transactions_spans",
		"language_name_mapping", "span-links", "hostdata",
	} {
		t.Run(name, func(t *testing.T) {
			got := decodeFile(t, name, edotBatchSize)[0].Traces
			want, err := golden.ReadTraces(filepath.Join("testdata", "edot", name+"_expected.yaml"))
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, got, ptracetest.IgnoreStartTimestamp(), ptracetest.IgnoreEndTimestamp()))
		})
	}
	for _, name := range []string{"errors", "logs"} {
		t.Run(name, func(t *testing.T) {
			got := decodeFile(t, name, edotBatchSize)[0].Logs
			want, err := golden.ReadLogs(filepath.Join("testdata", "edot", name+"_expected.yaml"))
			require.NoError(t, err)
			require.NoError(t, plogtest.CompareLogs(want, got, plogtest.IgnoreLogRecordsOrder()))
		})
	}
	for _, name := range []string{"metricsets", "multiple_histogram_metrics_samples"} {
		t.Run(name, func(t *testing.T) {
			got := decodeFile(t, name, edotBatchSize)[0].Metrics
			want, err := golden.ReadMetrics(filepath.Join("testdata", "edot", name+"_expected.yaml"))
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, got, pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				// golden.WriteMetrics sorts what it writes, as EDOT's test says.
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder()))
		})
	}
}

// TestCounts checks that every event is converted once and counted under its type, whatever the
// batch size.
func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Counts
	}{
		{"transactions_spans", Counts{Transaction: 4, Span: 5}},
		{"errors", Counts{Error: 5}},
	} {
		for _, batchSize := range []int{1, 3, 1000} {
			var sum Counts
			spans, logs := 0, 0
			for _, out := range decodeFile(t, tc.file, batchSize) {
				for i, n := range out.Events {
					sum[i] += n
				}
				spans += out.Traces.SpanCount()
				logs += out.Logs.LogRecordCount()
			}
			assert.Equal(t, tc.want, sum, "%s, batches of %d", tc.file, batchSize)
			assert.Equal(t, sum[Transaction]+sum[Span], spans)
			assert.Equal(t, sum[Error]+sum[Log], logs)
		}
	}
}

// TestGroupedResourcesHoldTheSameSpans: with GroupResources, every span is the same and under a
// resource with the same attributes as in EDOT's output, and no two resources are equal.
func TestGroupedResourcesHoldTheSameSpans(t *testing.T) {
	for _, name := range []string{"transactions", "spans", "transactions_spans", "span-links", "hostdata", "invalid_ids"} {
		t.Run(name, func(t *testing.T) {
			edot := decodeFileWith(t, name, 1000, Options{})[0].Traces
			grouped := decodeFileWith(t, name, 1000, Options{GroupResources: true})[0].Traces
			require.Equal(t, edot.SpanCount(), grouped.SpanCount())
			assert.ElementsMatch(t, flatten(t, edot), flatten(t, grouped))
			rss := grouped.ResourceSpans()
			for i := range rss.Len() {
				require.Equal(t, 1, rss.At(i).ScopeSpans().Len())
				for j := range i {
					assert.False(t, rss.At(i).Resource().Attributes().Equal(rss.At(j).Resource().Attributes()), "resources %d and %d are equal", i, j)
				}
			}
			if edot.SpanCount() > 1 {
				assert.Less(t, rss.Len(), edot.ResourceSpans().Len(), "grouping saved no resource")
			}
		})
	}
}

// flatten lists each span with its resource's attributes.
func flatten(t *testing.T, td ptrace.Traces) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				// Attributes as maps: EDOT's mapping writes HTTP headers in a Go map's order.
				one := ptrace.NewTraces()
				copied := one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
				s.CopyTo(copied)
				copied.Attributes().Clear()
				b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
				require.NoError(t, err)
				out = append(out, map[string]any{
					"resource": rs.Resource().Attributes().AsRaw(), "attributes": s.Attributes().AsRaw(), "span": string(b),
				})
			}
		}
	}
	return out
}
