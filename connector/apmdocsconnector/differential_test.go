package apmdocsconnector

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modeljson"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/elastic/apm-data/model/modelprocessor"
	"github.com/stretchr/testify/require"
	"go.elastic.co/fastjson"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver"
)

// The intake bodies compared: real agents' requests recorded for the receiver's tests, and the
// valid ones among EDOT's receiver's test inputs (each directory's README names its source).
var intakeBodies = []string{
	"../../receiver/elasticapmreceiver/testdata/agents/elastic-apm-node-4.18.ndjson",
	"../../receiver/elasticapmreceiver/testdata/agents/elastic-apm-node-4.18-metrics.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/errors.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/hostdata.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/language_name_mapping.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/logs.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/metricsets.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/multiple_histogram_metrics_samples.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/span-links.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/spans.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/transactions.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/transactions_spans.ndjson",
	"../../receiver/elasticapmreceiver/internal/convert/testdata/edot/unknown-span-type.ndjson",
}

// TestAgentDocumentsAreAPMServers: the documents an Elastic APM agent's request becomes through
// the intake receiver (output apm_events) and this connector equal those APM Server 8.13.4 writes
// for it: apm-data's intake decoder, then the processors APM Server runs before writing
// (internal/beater: host name, service node name, grouping key, error message, culprit, observer,
// data stream, unsampled transactions dropped), then apm-data's encoding.
func TestAgentDocumentsAreAPMServers(t *testing.T) {
	for _, path := range intakeBodies {
		t.Run(filepath.Base(path), func(t *testing.T) {
			body, err := os.ReadFile(path)
			require.NoError(t, err)
			got := throughTracegate(t, body)
			want := asAPMServer(t, body)
			require.NotEmpty(t, want)
			require.Len(t, got, len(want))
			for i := range want {
				if want[i] != got[i] {
					t.Errorf("document %d differs:\nAPM Server: %s\ntracegate:  %s", i, want[i], got[i])
				}
			}
		})
	}
}

// throughTracegate posts body to the receiver and writes its events with the connector.
func throughTracegate(t *testing.T, body []byte) []string {
	t.Helper()
	events := &consumertest.LogsSink{}
	f := elasticapmreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*elasticapmreceiver.Config)
	cfg.NetAddr.Endpoint = freeAddr(t)
	cfg.Output = elasticapmreceiver.OutputAPMEvents
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, events)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, rcv.Shutdown(context.Background())) }()
	resp, err := http.Post("http://"+cfg.NetAddr.Endpoint+"/intake/v2/events", "application/x-ndjson", bytes.NewReader(body))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusAccepted, resp.StatusCode)

	docs := &consumertest.LogsSink{}
	c := differentialConfig()
	_, lg, _ := startSides(t, c, docs)
	for _, ld := range events.AllLogs() {
		require.NoError(t, lg.ConsumeLogs(context.Background(), ld))
	}
	var out []string
	for _, d := range docsOf(t, docs.AllLogs()) {
		out = append(out, d.index+" "+canonical(t, d.body))
	}
	sort.Strings(out)
	return out
}

// asAPMServer is what APM Server makes of body, with apm-data alone.
func asAPMServer(t *testing.T, body []byte) []string {
	t.Helper()
	var batch modelpb.Batch
	decoder := elasticapm.NewProcessor(elasticapm.Config{MaxEventSize: 300 * 1024, Semaphore: unlimited{}})
	var result elasticapm.Result
	require.NoError(t, decoder.HandleStream(context.Background(), &modelpb.APMEvent{Event: &modelpb.Event{}},
		bytes.NewReader(body), 10, modelpb.ProcessBatchFunc(func(_ context.Context, b *modelpb.Batch) error {
			for _, e := range *b {
				batch = append(batch, e.CloneVT())
			}
			return nil
		}), &result))
	cfg := differentialConfig()
	chain := modelprocessor.Chained{
		modelprocessor.SetHostHostname{},
		modelprocessor.SetServiceNodeName{},
		modelprocessor.SetGroupingKey{NewHash: md5.New},
		modelprocessor.SetErrorMessage{},
		modelprocessor.SetCulprit{},
		modelpb.ProcessBatchFunc(func(_ context.Context, b *modelpb.Batch) error {
			for _, e := range *b {
				e.Observer = &modelpb.Observer{Hostname: cfg.Observer.Hostname, Type: cfg.Observer.Type}
			}
			return nil
		}),
		&modelprocessor.SetDataStream{Namespace: cfg.Namespace},
		modelprocessor.NewDropUnsampled(false, func(int64) {}),
	}
	require.NoError(t, chain.ProcessBatch(context.Background(), &batch))
	var out []string
	for _, e := range batch {
		var w fastjson.Writer
		require.NoError(t, modeljson.MarshalAPMEvent(e, &w))
		var doc map[string]any
		require.NoError(t, json.Unmarshal(w.Bytes(), &doc))
		ds := e.GetDataStream()
		out = append(out, ds.Type+"-"+ds.Dataset+"-"+ds.Namespace+" "+canonical(t, doc))
	}
	sort.Strings(out)
	return out
}

func differentialConfig() *Config {
	c := createDefaultConfig()
	c.Aggregation.Intervals = nil // documents only: the metricsets are APM Server's aggregation's
	c.Observer.Hostname = "gateway-1"
	return c
}

// canonical is a document's JSON with sorted keys, without event.received (the time the
// request arrived).
func canonical(t *testing.T, doc map[string]any) string {
	t.Helper()
	// apm-data decodes an agent's samples from a JSON object: their order is not the agent's.
	if ms, ok := doc["metricset"].(map[string]any); ok {
		if samples, ok := ms["samples"].([]any); ok {
			sort.Slice(samples, func(i, j int) bool {
				return samples[i].(map[string]any)["name"].(string) < samples[j].(map[string]any)["name"].(string)
			})
		}
	}
	if ev, ok := doc["event"].(map[string]any); ok {
		delete(ev, "received")
		if len(ev) == 0 {
			delete(doc, "event")
		}
	}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return string(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	time.Sleep(10 * time.Millisecond)
	return addr
}
