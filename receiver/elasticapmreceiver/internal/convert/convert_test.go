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
	body, err := os.ReadFile(filepath.Join("testdata", "edot", name+".ndjson"))
	require.NoError(t, err)
	conv := NewConverter(zap.NewNop(), false) // EDOT's output, which has no kind inference
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
