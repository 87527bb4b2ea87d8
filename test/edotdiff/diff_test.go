package edotdiff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/elastic/opentelemetry-collector-components/processor/elasticapmprocessor"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
)

// enrich runs Elastic's APM enrichment (the elasticapm processor of the Kibana APM overlay) over
// o, as the pipeline does after the receiver.
func enrich(t *testing.T, o output) output {
	t.Helper()
	f := elasticapmprocessor.NewFactory()
	set := processortest.NewNopSettings(f.Type())
	ctx := context.Background()
	ts, ls, ms := new(consumertest.TracesSink), new(consumertest.LogsSink), new(consumertest.MetricsSink)
	tp, err := f.CreateTraces(ctx, set, f.CreateDefaultConfig(), ts)
	require.NoError(t, err)
	lp, err := f.CreateLogs(ctx, set, f.CreateDefaultConfig(), ls)
	require.NoError(t, err)
	mp, err := f.CreateMetrics(ctx, set, f.CreateDefaultConfig(), ms)
	require.NoError(t, err)
	require.NoError(t, tp.ConsumeTraces(ctx, o.traces))
	require.NoError(t, lp.ConsumeLogs(ctx, o.logs))
	require.NoError(t, mp.ConsumeMetrics(ctx, o.metrics))
	return output{traces: mergeTraces(ts.AllTraces()), logs: mergeLogs(ls.AllLogs()), metrics: mergeMetrics(ms.AllMetrics())}
}

func recordsOf(o output) records {
	all := spanRecords(o.traces)
	for k, v := range logRecords(o.logs) {
		all[k] = v
	}
	for k, v := range pointRecords(o.metrics) {
		all[k] = v
	}
	return all
}

// diff lists, per item, the fields whose values differ.
func diff(want, got records) []string {
	var out []string
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			out = append(out, "missing: "+key)
			continue
		}
		for _, f := range unionKeys(w, g) {
			if !reflect.DeepEqual(w[f], g[f]) {
				out = append(out, fmt.Sprintf("%s: %s: want %#v, got %#v", key, f, w[f], g[f]))
			}
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			out = append(out, "unexpected: "+key)
		}
	}
	sort.Strings(out)
	return out
}

func unionKeys(a, b record) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// inputs are the intake bodies both receivers are fed: EDOT's own test inputs (credited in that
// directory), the receiver's invalid-input seeds (their valid events are taken), and tracegen's
// intake load.
func inputs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pattern := range []string{
		"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/*.ndjson",
		"../../receiver/elasticapmreceiver/testdata/invalid/*.ndjson",
		"testdata/*.ndjson",
	} {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, name := range files {
			body, err := os.ReadFile(name)
			require.NoError(t, err)
			out[filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name)] = body
		}
	}
	out["tracegen"] = tracegenBody(t)
	return out
}

// TestSameAsEDOT feeds the same intake bodies to EDOT's intake receiver and to ours, runs both
// outputs through Elastic's APM enrichment as the Kibana APM overlay does, and requires every
// field of every span, log record and data point to be equal, apart from the departures
// expected() names.
func TestSameAsEDOT(t *testing.T) {
	edot, ours := startEDOT(t), startOurs(t)
	for name, body := range inputs(t) {
		t.Run(name, func(t *testing.T) {
			e, o := edot.send(t, body), ours.send(t, body)
			require.Equal(t, e.String(), o.String(), "the same items")
			pre := recordsOf(e)
			edotDocs, ourDocs := recordsOf(enrich(t, e)), recordsOf(enrich(t, o))
			want := records{}
			for key, r := range edotDocs {
				want[key] = expected(r, pre[key], ourDocs[key], globalLabels(body))
			}
			if d := diff(want, ourDocs); len(d) > 0 {
				t.Errorf("%d differences:\n%s", len(d), strings.Join(d, "\n"))
			}
		})
	}
}
