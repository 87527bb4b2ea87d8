package elasticsearchdocumentsexporter

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// bulkCapture answers every bulk request with 201 per document and keeps the request lines
// (action, source, ...) as sent, decompressed.
type bulkCapture struct {
	mu    sync.Mutex
	lines []string
}

func (c *bulkCapture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	if !strings.HasSuffix(r.URL.Path, "/_bulk") {
		_, _ = io.WriteString(w, `{"version":{"number":"9.2.0"}}`)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<24)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	c.mu.Lock()
	c.lines = append(c.lines, lines...)
	c.mu.Unlock()
	var resp strings.Builder
	resp.WriteString(`{"errors":false,"items":[`)
	for i := 0; i < len(lines)/2; i++ {
		if i > 0 {
			resp.WriteByte(',')
		}
		resp.WriteString(`{"create":{"status":201}}`)
	}
	resp.WriteString(`]}`)
	_, _ = io.WriteString(w, resp.String())
}

func (c *bulkCapture) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := c.lines
	c.lines = nil
	return lines
}

// linesOf sends td through an exporter the factory makes with cfg, and returns the bulk lines the
// capture server received.
func linesOf(t *testing.T, f exporter.Factory, cfg component.Config, c *bulkCapture, td ptrace.Traces) []string {
	t.Helper()
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	copied := ptrace.NewTraces()
	td.CopyTo(copied)
	require.NoError(t, exp.ConsumeTraces(context.Background(), copied))
	require.NoError(t, exp.Shutdown(context.Background()))
	return c.take()
}

// contribExporter is the contrib elasticsearch exporter as configs/default.yaml sets it up where
// it shapes documents (otel mode, ids from elasticsearch.document_id, no queue), without retries
// and compression, which change no byte of a document.
func contribExporter(url string) (exporter.Factory, component.Config) {
	f := elasticsearchexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*elasticsearchexporter.Config)
	cfg.Endpoints = []string{url}
	cfg.QueueBatchConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.TracesDynamicID.Enabled = true
	cfg.LogsDynamicID.Enabled = true
	cfg.Retry.Enabled = false
	cfg.Compression = ""
	return f, cfg
}

// TestSpanDocumentsAreContribs: the same traces through the contrib elasticsearch exporter
// (v0.148.0) and through ours give the same bulk request lines, byte for byte: actions (index,
// _id) and sources, spans and span events.
func TestSpanDocumentsAreContribs(t *testing.T) {
	theirs, ours := &bulkCapture{}, &bulkCapture{}
	theirSrv, ourSrv := httptest.NewServer(theirs), httptest.NewServer(ours)
	defer theirSrv.Close()
	defer ourSrv.Close()
	cf, ccfg := contribExporter(theirSrv.URL)
	of := NewFactory()
	ocfg := of.CreateDefaultConfig().(*Config)
	ocfg.Endpoints = []string{ourSrv.URL}

	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{}
	for round := range 200 {
		td := randomTraces(rng)
		want, got := linesOf(t, cf, ccfg, theirs, td), linesOf(t, of, ocfg, ours, td)
		require.NotEmpty(t, want)
		require.Len(t, got, len(want), "round %d: bulk lines", round)
		for i := range want {
			require.Equal(t, want[i], got[i], "round %d, line %d", round, i)
			for _, what := range []string{`"_index":"logs-`, `"_id":`, `"geo.location":[`, `.otel-team_a_b"`, `"event.name":`, `\ufffd`, `1.0e+21`} {
				if strings.Contains(got[i], what) {
					seen[what]++
				}
			}
		}
	}
	// The corpus reached what it is there for: span events, ids, geo points, sanitized names...
	require.Len(t, seen, 7, "%v", seen)
	for name, td := range handMadeTraces() {
		require.Equal(t, linesOf(t, cf, ccfg, theirs, td), linesOf(t, of, ocfg, ours, td), name)
	}
}
