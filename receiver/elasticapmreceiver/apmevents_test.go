package elasticapmreceiver

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tracegate/tracegate/internal/apmevent"
)

// TestAPMEventsOutput: with output apm_events every event of a request reaches the logs pipeline
// as one record of an APM event scope, the spans spanjson decodes and those apm-data decodes
// alike, with the request's metadata; nothing goes to the traces or metrics pipelines.
func TestAPMEventsOutput(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "agents", "elastic-apm-node-4.18.ndjson"))
	require.NoError(t, err)
	tr := startReceiver(t, func(c *Config) { c.Output = OutputAPMEvents }, nil)
	for range 2 { // the second request's metadata comes from the cache
		rep := tr.post(t, body, nil)
		require.Equal(t, http.StatusAccepted, rep.status, rep.body)
	}
	assert.Zero(t, tr.traces.SpanCount())
	assert.Zero(t, tr.metrics.DataPointCount())
	require.Len(t, tr.logs.AllLogs(), 2)
	types := map[string]int{}
	for _, ld := range tr.logs.AllLogs() {
		sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
		require.True(t, apmevent.IsEvents(sl))
		for i := 0; i < sl.LogRecords().Len(); i++ {
			e, err := apmevent.Decode(sl.LogRecords().At(i))
			require.NoError(t, err)
			assert.Equal(t, "apm-node-e2e", e.GetService().GetName())
			assert.Equal(t, "nodejs", e.GetAgent().GetName())
			types[e.Type().String()]++
		}
	}
	for _, typ := range []string{
		modelpb.TransactionEventType.String(), modelpb.SpanEventType.String(),
		modelpb.ErrorEventType.String(), modelpb.MetricEventType.String(),
	} {
		assert.Positive(t, types[typ], typ)
	}
}
