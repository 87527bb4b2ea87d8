package elasticsearchdocumentsexporter

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter/internal/metadata"
	"github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter/internal/metadatatest"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	load := func(name string) *Config {
		cfg := createDefaultConfig()
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(cfg))
		return cfg
	}
	def := load("")
	require.NoError(t, xconfmap.Validate(def))
	assert.Equal(t, []string{"http://localhost:9200"}, def.Endpoints)
	custom := load("custom")
	require.NoError(t, xconfmap.Validate(custom))
	assert.Equal(t, []string{"https://es1:9200", "https://es2:9200"}, custom.Endpoints)
	assert.Equal(t, "/etc/es/ca.pem", custom.TLS.CAFile)
	assert.Equal(t, 0, custom.CompressionLevel)
	assert.Equal(t, 30*time.Second, custom.Timeout)
	require.EqualError(t, xconfmap.Validate(load("bad")), `endpoints: "es1:9200" is not an http or https URL
api_key and user/password are exclusive
user and password go together
compression_level must be 0 to 9, got 12
timeout must be positive, got 0s`)
	require.EqualError(t, createDefaultConfig().Validate(), "endpoints must name at least one Elasticsearch URL")
}

// started is an exporter writing to a stand-in, with its telemetry.
type started struct {
	es  *esstandin.Server
	exp *documentsExporter
	tel *componenttest.Telemetry
}

func start(t *testing.T) started {
	t.Helper()
	return startVersion(t, "8.13.4")
}

// startVersion: the stand-in answers as that Elasticsearch version (9.2 has the otel templates
// span documents need).
func startVersion(t *testing.T, version string) started {
	t.Helper()
	es, err := esstandin.New(esstandin.Options{Version: version, KeepDocuments: true})
	require.NoError(t, err)
	require.NoError(t, es.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = es.Close() })
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := createDefaultConfig()
	cfg.Endpoints = []string{es.URL()}
	exp, err := newExporter(metadatatest.NewSettings(tel), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, exp.shutdown(context.Background())) })
	return started{es: es, exp: exp, tel: tel}
}

// documents: n records in one scope routed to index, each with an id and a body.
func documents(index string, n int, idPrefix string) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().Attributes().PutStr(attrIndex, index)
	for i := range n {
		r := sl.LogRecords().AppendEmpty()
		r.Body().SetEmptyBytes().FromRaw([]byte(`{"@timestamp":"2026-12-06T10:00:00.000Z","span":{"id":"` + idPrefix + string(rune('a'+i)) + `"}}`))
		if idPrefix != "" {
			r.Attributes().PutStr(attrDocumentID, idPrefix+string(rune('a'+i)))
		}
	}
	return ld
}

func outcome(o string, v int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: v, Attributes: outcomes[o]}
}

func TestStoredAsTheyAre(t *testing.T) {
	s := start(t)
	ld := documents("traces-apm-default", 3, "d")
	require.NoError(t, s.exp.consumeLogs(context.Background(), ld))
	docs := s.es.Documents()
	require.Len(t, docs, 3)
	for i, d := range docs {
		assert.Equal(t, "traces-apm-default", d.Index)
		assert.Equal(t, "d"+string(rune('a'+i)), d.ID)
		want := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(i).Body().Bytes().AsRaw()
		assert.Equal(t, string(want), string(d.Source), "the bytes as they are")
	}
	// The same documents again: copies, refused with 409, not an error.
	require.NoError(t, s.exp.consumeLogs(context.Background(), ld))
	assert.Len(t, s.es.Documents(), 3)
	metadatatest.AssertEqualExporterElasticsearchDocumentsDocuments(t, s.tel, []metricdata.DataPoint[int64]{
		outcome("stored", 3), outcome("duplicate", 3),
	}, metricdatatest.IgnoreTimestamp())
	assert.Equal(t, map[string]uint64{"logs": 2}, bulksTimed(t, s.tel))
}

func TestRetryableItemsComeBack(t *testing.T) {
	s := start(t)
	require.NoError(t, s.es.SetFaults(esstandin.Faults{ItemTooManyRequestsFraction: 1}))
	err := s.exp.consumeLogs(context.Background(), documents("logs-apm.error-default", 2, "e"))
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err), "a 429 is retried")
	var again consumererror.Logs
	require.ErrorAs(t, err, &again)
	require.Equal(t, 2, again.Data().LogRecordCount())
	// Each record to send again names its data stream itself.
	require.NoError(t, s.es.SetFaults(esstandin.Faults{}))
	require.NoError(t, s.exp.consumeLogs(context.Background(), again.Data()))
	require.Len(t, s.es.Documents(), 2)
	assert.Equal(t, "logs-apm.error-default", s.es.Documents()[0].Index)
}

func TestElasticsearchDownIsRetryable(t *testing.T) {
	s := start(t)
	require.NoError(t, s.es.SetRefusing(true))
	err := s.exp.consumeLogs(context.Background(), documents("traces-apm-default", 1, "x"))
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err))
	metadatatest.AssertEqualExporterElasticsearchDocumentsDocuments(t, s.tel, []metricdata.DataPoint[int64]{
		outcome("retried", 1),
	}, metricdatatest.IgnoreTimestamp())
}

func TestRefusedDocumentsAreCounted(t *testing.T) {
	s := start(t)
	ld := documents("traces-apm-default", 1, "ok")
	// No data stream named: not a document.
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(`{"a":1}`)
	// An invalid index name: Elasticsearch answers 400 for the item.
	bad := documents("Traces-Upper", 1, "bad")
	bad.ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	require.NoError(t, s.exp.consumeLogs(context.Background(), ld))
	assert.Len(t, s.es.Documents(), 1)
	metadatatest.AssertEqualExporterElasticsearchDocumentsDocuments(t, s.tel, []metricdata.DataPoint[int64]{
		outcome("refused", 2), outcome("stored", 1),
	}, metricdatatest.IgnoreTimestamp())
}

func TestThroughTheFactory(t *testing.T) {
	s := start(t)
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Endpoints = []string{s.es.URL()}
	exp, err := f.CreateLogs(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()
	require.NoError(t, exp.ConsumeLogs(context.Background(), documents("metrics-apm.app.x-default", 4, "m")))
	assert.Len(t, s.es.Documents(), 4)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(s.es.Documents()[0].Source, &doc))
	assert.Equal(t, "2026-12-06T10:00:00.000Z", doc["@timestamp"])
}
