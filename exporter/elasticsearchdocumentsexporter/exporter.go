package elasticsearchdocumentsexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/elastic/elastic-transport-go/v8/elastictransport"
	"github.com/elastic/go-docappender/v2"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter/internal/metadata"
	"github.com/tracegate/tracegate/internal/warnonce"
)

// The attributes that route a record, the contrib exporter's names: the record's, else its
// scope's, else its resource's.
const (
	attrIndex      = "elasticsearch.index"
	attrDocumentID = "elasticsearch.document_id"
)

var outcomes = map[string]attribute.Set{}

func init() {
	for _, o := range []string{"stored", "duplicate", "retried", "refused"} {
		outcomes[o] = attribute.NewSet(attribute.String("outcome", o))
	}
}

type documentsExporter struct {
	cfg       *Config
	set       exporter.Settings
	telemetry *metadata.TelemetryBuilder
	warnings  *warnonce.Warner
	client    elastictransport.Interface
	// indexers are reused bulk builders: one per concurrent call (a BulkIndexer is not safe for
	// concurrent use), with their buffers and gzip writers. Spans' require data streams, as the
	// contrib exporter's otel mode does; documents written as they are do not.
	indexers, traceIndexers sync.Pool
	spanWriters             sync.Pool
}

// emptyMap stands for a record without attributes of its own (read only).
var emptyMap = pcommon.NewMap()

func newExporter(set exporter.Settings, cfg *Config) (*documentsExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &documentsExporter{cfg: cfg, set: set, telemetry: tb, warnings: warnonce.New(set.Logger)}, nil
}

func (e *documentsExporter) start(ctx context.Context, _ component.Host) error {
	tlsCfg, err := e.cfg.TLS.LoadTLSConfig(ctx)
	if err != nil {
		return err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsCfg
	transport.MaxIdleConnsPerHost = 20
	var urls []*url.URL
	for _, ep := range e.cfg.Endpoints {
		u, err := url.Parse(ep)
		if err != nil {
			return err
		}
		urls = append(urls, u)
	}
	// No retries in the transport but to the next node: what fails goes back to the buffer.
	client, err := elastictransport.New(elastictransport.Config{
		URLs: urls, APIKey: string(e.cfg.APIKey), Username: e.cfg.User, Password: string(e.cfg.Password),
		Transport: transport, MaxRetries: len(urls) - 1,
		RetryOnStatus: []int{502, 503, 504}, DisableRetry: len(urls) == 1,
		UserAgent: "tracegate/" + e.set.BuildInfo.Version,
	})
	if err != nil {
		return err
	}
	e.client = client
	return nil
}

func (e *documentsExporter) shutdown(context.Context) error {
	e.telemetry.Shutdown()
	return nil
}

func (e *documentsExporter) indexer(pool *sync.Pool, requireDataStream bool) (*docappender.BulkIndexer, error) {
	if bi, ok := pool.Get().(*docappender.BulkIndexer); ok {
		return bi, nil
	}
	return docappender.NewBulkIndexer(docappender.BulkIndexerConfig{
		Client: e.client, CompressionLevel: e.cfg.CompressionLevel, RequireDataStream: requireDataStream,
	})
}

// consumeLogs sends the batch as one bulk request. A document Elasticsearch refuses with 429 or
// 5xx, or a request that fails as a whole, comes back to the caller as a retryable error with
// the records to send again; a 409 is a copy of a stored document; any other refusal is counted,
// logged once per error type and not retried (the same bytes would be refused again).
func (e *documentsExporter) consumeLogs(ctx context.Context, ld plog.Logs) error {
	bi, err := e.indexer(&e.indexers, false)
	if err != nil {
		return err
	}
	defer func() {
		bi.Reset()
		e.indexers.Put(bi)
	}()
	records, err := e.add(ctx, bi, ld)
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	stat, err := e.flush(ctx, bi, logsSignal)
	if err != nil {
		return e.requestFailed(ctx, err, len(records))
	}
	again := plog.NewLogs()
	var retry plog.LogRecordSlice
	e.answered(ctx, stat, func(pos int) {
		if retry == (plog.LogRecordSlice{}) {
			retry = again.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		}
		if pos < len(records) {
			// Its data stream goes with it: the scope that named it stays behind.
			r := retry.AppendEmpty()
			records[pos].record.CopyTo(r)
			r.Attributes().PutStr(attrIndex, records[pos].index)
		}
	})
	if again.LogRecordCount() == 0 {
		return nil
	}
	return consumererror.NewLogs(fmt.Errorf("%d documents refused for now (429 or 5xx)", again.LogRecordCount()), again)
}

// added is a record in the bulk request, with the data stream it was routed to.
type added struct {
	record plog.LogRecord
	index  string
}

// add puts every record into the bulk request and returns them in its order.
func (e *documentsExporter) add(ctx context.Context, bi *docappender.BulkIndexer, ld plog.Logs) ([]added, error) {
	var records []added
	var missing int64
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			for k := 0; k < sl.LogRecords().Len(); k++ {
				r := sl.LogRecords().At(k)
				index := attr(attrIndex, r.Attributes(), sl.Scope().Attributes(), rl.Resource().Attributes())
				body := bodyBytes(r.Body())
				if index == "" || len(body) == 0 {
					missing++
					continue
				}
				item := docappender.BulkIndexerItem{
					Index: index, DocumentID: attr(attrDocumentID, r.Attributes()), Body: bytes.NewReader(body),
				}
				if err := bi.Add(item); err != nil { // the bulk buffer failed: nothing of the batch is sent
					e.count(ctx, "refused", int64(ld.LogRecordCount()))
					return nil, consumererror.NewPermanent(err)
				}
				records = append(records, added{record: r, index: index})
			}
		}
	}
	if missing > 0 {
		e.count(ctx, "refused", missing)
		e.warnings.Warn("no_index", "otelcol.exporter.elasticsearch_documents.documents{outcome=refused}",
			"log records without a JSON body or an elasticsearch.index attribute are not documents: refused",
			zap.Int64("records", missing))
	}
	return records, nil
}

func (e *documentsExporter) requestFailed(ctx context.Context, err error, n int) error {
	var flush docappender.ErrorFlushFailed
	if errors.As(err, &flush) && flush.StatusCode() >= 400 && flush.StatusCode() < 500 && flush.StatusCode() != http.StatusTooManyRequests &&
		flush.StatusCode() != http.StatusUnauthorized && flush.StatusCode() != http.StatusForbidden {
		// A bad request stays bad: counted and dropped. Credentials can be fixed: retried.
		e.telemetry.ExporterElasticsearchDocumentsDocuments.Add(ctx, int64(n), metric.WithAttributeSet(outcomes["refused"]))
		return consumererror.NewPermanent(fmt.Errorf("bulk request refused: %w", err))
	}
	e.telemetry.ExporterElasticsearchDocumentsDocuments.Add(ctx, int64(n), metric.WithAttributeSet(outcomes["retried"]))
	return fmt.Errorf("bulk request failed: %w", err)
}

// answered counts what Elasticsearch did with each document of a flushed bulk request and calls
// retry with the position of each it refused for now (429 or 5xx), to be sent again.
func (e *documentsExporter) answered(ctx context.Context, stat docappender.BulkIndexerResponseStat, retry func(pos int)) {
	var duplicates, refused, retried int64
	for _, f := range stat.FailedDocs {
		switch {
		case f.Status == http.StatusConflict:
			duplicates++
		case f.Status == http.StatusTooManyRequests || f.Status >= 500:
			retried++
			retry(f.Position)
		default:
			refused++
			e.warnings.Warn("refused/"+f.Error.Type, "otelcol.exporter.elasticsearch_documents.documents{outcome=refused}",
				"Elasticsearch refused a document", zap.Int("status", f.Status), zap.String("index", f.Index),
				zap.String("error.type", f.Error.Type))
		}
	}
	e.count(ctx, "stored", stat.Indexed)
	e.count(ctx, "duplicate", duplicates)
	e.count(ctx, "refused", refused)
	e.count(ctx, "retried", retried)
}

// The signal attribute's values, built once.
var (
	logsSignal   = metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", "logs")))
	tracesSignal = metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", "traces")))
)

// flush sends the bulk request and records how long Elasticsearch took to answer, or to fail.
func (e *documentsExporter) flush(ctx context.Context, bi *docappender.BulkIndexer, signal metric.RecordOption) (docappender.BulkIndexerResponseStat, error) {
	start := time.Now()
	stat, err := bi.Flush(ctx)
	e.telemetry.ExporterElasticsearchDocumentsBulkDuration.Record(ctx, time.Since(start).Seconds(), signal)
	return stat, err
}

func (e *documentsExporter) count(ctx context.Context, outcome string, n int64) {
	if n > 0 {
		e.telemetry.ExporterElasticsearchDocumentsDocuments.Add(ctx, n, metric.WithAttributeSet(outcomes[outcome]))
	}
}

// attr is the first of the maps' string values of key.
func attr(key string, maps ...pcommon.Map) string {
	for _, m := range maps {
		if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
	}
	return ""
}

func bodyBytes(v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeBytes:
		return v.Bytes().AsRaw()
	case pcommon.ValueTypeStr:
		return []byte(v.Str())
	}
	return nil
}
