package elasticapmreceiver

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadatatest"
)

// TestSmallMaxEventSize: with max_event_size too small for the metadata carrier, apm-data reads
// the stream alone, and the answer is its own.
func TestSmallMaxEventSize(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxEventSize = 150
	r, err := newReceiver(cfg, metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(t, err)
	body := []byte(`{"metadata":{"service":{"name":"s","agent":{"name":"go","version":"1"}}}}` + "\n" +
		`{"span":{"id":"01","trace_id":"02","parent_id":"03","name":"n","type":"db","timestamp":1,"duration":1}}` + "\n" +
		`{"span":{"id":"01","trace_id":"02","parent_id":"03","name":"` + strings.Repeat("n", 200) + `","type":"db","timestamp":1,"duration":1}}` + "\n")
	res := newResult()
	bufs := r.buffers.get()
	defer r.buffers.put(bufs)
	in, err := r.readerOf(httptest.NewRecorder(), bytes.NewReader(body), bufs)
	require.NoError(t, err)
	d := r.decode(context.Background(), in, bufs, res)
	requireSameAsAPMDataAlone(t, r, body, d, res)
	assert.Equal(t, 1, d.out.Traces.SpanCount())
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "event exceeded the permitted size", res.Errors[0].Message)
}

// TestMetadataCacheKeepsShortLines: a line over maxCachedLine is decoded with every request.
func TestMetadataCacheKeepsShortLines(t *testing.T) {
	c := newMetadataCache()
	e := &modelpb.APMEvent{}
	c.put([]byte("short"), e)
	long := bytes.Repeat([]byte{' '}, maxCachedLine+1)
	c.put(long, e)
	got, ok := c.get([]byte("short"))
	assert.True(t, ok)
	assert.Same(t, e, got)
	_, ok = c.get(long)
	assert.False(t, ok)
	for i := range maxCachedMetadata + 10 {
		c.put([]byte(strings.Repeat("x", i)), e)
	}
	assert.Len(t, c.events, maxCachedMetadata)
}

// TestAgentSpansTakeTheCheapPath: every transaction and span the real elastic-apm-node agent sent
// (testdata/agents) is decoded by spanjson; its errors and metricsets by apm-data.
func TestAgentSpansTakeTheCheapPath(t *testing.T) {
	r, err := newReceiver(createDefaultConfig().(*Config), metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(t, err)
	for _, name := range []string{"elastic-apm-node-4.18.ndjson", "elastic-apm-node-4.18-metrics.ndjson"} {
		body, err := os.ReadFile(filepath.Join("testdata", "agents", name))
		require.NoError(t, err)
		spans, others := 0, 0
		for _, line := range bytes.Split(bytes.TrimSpace(body), []byte("\n"))[1:] {
			if bytes.HasPrefix(line, []byte(`{"span"`)) || bytes.HasPrefix(line, []byte(`{"transaction"`)) {
				spans++
			} else {
				others++
			}
		}
		res := newResult()
		bufs := r.buffers.get()
		in, err := r.readerOf(httptest.NewRecorder(), bytes.NewReader(body), bufs)
		require.NoError(t, err)
		d := r.decode(context.Background(), in, bufs, res)
		r.buffers.put(bufs)
		require.Empty(t, res.Errors, name)
		assert.Positive(t, spans, name)
		assert.Equal(t, spans, d.bySpanjson, name)
		assert.Equal(t, others, d.total()-d.bySpanjson, name)
	}
}

// TestReofferConvertsTheSameSpans: a re-offer converts, from the events kept, the spans the first
// offer had: own labels (held apart from the events by spanjson), global ones, the span whose
// label overrides a global one; for a first request and for one whose metadata was cached.
func TestReofferConvertsTheSameSpans(t *testing.T) {
	r, err := newReceiver(createDefaultConfig().(*Config), metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(t, err)
	for _, body := range []string{globalLabelsBody, globalLabelsBody, string(tracegenBody(t, 2))} {
		res := newResult()
		bufs := r.buffers.get()
		in, err := r.readerOf(httptest.NewRecorder(), strings.NewReader(body), bufs)
		require.NoError(t, err)
		d := r.decode(context.Background(), in, bufs, res)
		r.buffers.put(bufs)
		require.Empty(t, res.Errors)
		require.Positive(t, d.bySpanjson)
		first := spanDocuments(t, d.out.Traces)
		assert.Equal(t, first, spanDocuments(t, r.again(context.Background(), d).Traces))
		if body == globalLabelsBody {
			assert.Contains(t, strings.Join(first, "\n"), `"numeric_labels.n":2.5`)
			assert.Contains(t, strings.Join(first, "\n"), `"labels.team":"b"`)
			assert.Equal(t, 2, d.out.Traces.ResourceSpans().Len(), "the overriding span has a resource of its own")
		}
	}
}
