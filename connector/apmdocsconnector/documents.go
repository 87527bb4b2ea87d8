package apmdocsconnector

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"strconv"

	"github.com/elastic/apm-data/model/modeljson"
	"github.com/elastic/apm-data/model/modelpb"
	"go.elastic.co/fastjson"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The attributes the elasticsearch_documents exporter routes a record by (the contrib
// exporter's names): the data stream to write to, on the scope, and the document's id.
const (
	attrIndex      = "elasticsearch.index"
	attrDocumentID = "elasticsearch.document_id"
)

// write counts the events, leaves out the unsampled transactions and hands the rest on as
// documents. The counts are made before the next consumer answers: a refused batch that a client
// sends again is counted again, as APM Server counts what an agent sends again.
func (a *apmDocs) write(ctx context.Context, batch modelpb.Batch, next consumer.Logs) error {
	if len(batch) == 0 {
		return nil
	}
	_ = a.enrich.ProcessBatch(ctx, &batch) // APM Server's processors return no error
	if a.agg != nil {
		a.agg.Add(batch)
	}
	if a.dropUnsampled != nil {
		before := len(batch)
		_ = a.dropUnsampled.ProcessBatch(ctx, &batch)
		if n := before - len(batch); n > 0 {
			a.dropped(ctx, int64(n), reasonUnsampled, nil)
		}
	}
	logs := a.documents(ctx, batch, "")
	if logs.LogRecordCount() == 0 {
		return nil
	}
	return next.ConsumeLogs(ctx, logs)
}

// documents encodes each event as APM Server does, the JSON as the record's body, one scope per
// data stream. salt tells apart the documents of a window written more than once.
func (a *apmDocs) documents(ctx context.Context, batch modelpb.Batch, salt string) plog.Logs {
	_ = a.route.ProcessBatch(ctx, &batch)
	logs := plog.NewLogs()
	scopes := map[string]plog.ScopeLogs{}
	rl := logs.ResourceLogs().AppendEmpty()
	var w fastjson.Writer
	h := sha256.New() // one per batch: reset for each document
	var key []byte
	var kinds [kindCount]int64
	for _, e := range batch {
		e.Observer = a.observer
		ds := e.GetDataStream()
		index := ds.GetType() + "-" + ds.GetDataset() + "-" + ds.GetNamespace()
		w.Reset()
		if err := modeljson.MarshalAPMEvent(e, &w); err != nil {
			a.dropped(ctx, 1, reasonUnconvertible, err)
			continue
		}
		rec := scopeFor(scopes, rl, index).LogRecords().AppendEmpty()
		rec.Body().SetEmptyBytes().FromRaw(w.Bytes())
		rec.SetTimestamp(pcommon.Timestamp(e.GetTimestamp()))
		if a.cfg.DocumentIDs {
			rec.Attributes().PutStr(attrDocumentID, documentID(h, &key, e, index, w.Bytes(), salt))
		}
		kinds[kindOf(e, salt != "")]++
	}
	for k, n := range kinds {
		if n > 0 {
			a.telemetry.ConnectorApmdocsDocuments.Add(ctx, n, metric.WithAttributeSet(kindSets[k]))
		}
	}
	return logs
}

func scopeFor(scopes map[string]plog.ScopeLogs, rl plog.ResourceLogs, index string) plog.ScopeLogs {
	sl, ok := scopes[index]
	if !ok {
		sl = rl.ScopeLogs().AppendEmpty()
		sl.Scope().Attributes().PutStr(attrIndex, index)
		scopes[index] = sl
	}
	return sl
}

// documentID names a document by what it is: a transaction, span or error by its id (a client's
// retry sends the same ids), anything else by its content and salt (a replay sends the same
// bytes). Elasticsearch answers 409 for a second document of the same id in a data stream.
func documentID(h hash.Hash, key *[]byte, e *modelpb.APMEvent, index string, doc []byte, salt string) string {
	*key = append((*key)[:0], index...)
	k := *key
	byContent := false
	switch e.Type() {
	case modelpb.TransactionEventType:
		k = keyParts(k, 't', e.GetTrace().GetId(), e.GetTransaction().GetId())
	case modelpb.SpanEventType:
		k = keyParts(k, 's', e.GetTrace().GetId(), e.GetSpan().GetId())
	case modelpb.ErrorEventType:
		// Not error.id: apm-data draws a random one for each exception event it converts.
		k = keyParts(k, 'e', e.GetTrace().GetId(), e.GetParentId(), e.GetError().GetGroupingKey())
		k = strconv.AppendUint(append(k, 0), e.GetTimestamp(), 10)
	default:
		k, byContent = keyParts(k, 'c', salt), true
	}
	*key = k
	h.Reset()
	_, _ = h.Write(k)
	if byContent {
		_, _ = h.Write(doc)
	}
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}

// keyParts appends a kind and NUL-separated parts to a document's key.
func keyParts(k []byte, kind byte, parts ...string) []byte {
	k = append(k, 0, kind)
	for _, p := range parts {
		k = append(append(k, 0), p...)
	}
	return k
}

// The kinds of documents counted.
const (
	kindTransaction = iota
	kindSpan
	kindError
	kindLog
	kindMetricset
	kindAggregated
	kindCount
)

var kindSets = [kindCount]attribute.Set{
	attribute.NewSet(attribute.String("kind", "transaction")),
	attribute.NewSet(attribute.String("kind", "span")),
	attribute.NewSet(attribute.String("kind", "error")),
	attribute.NewSet(attribute.String("kind", "log")),
	attribute.NewSet(attribute.String("kind", "metricset")),
	attribute.NewSet(attribute.String("kind", "aggregated")),
}

func kindOf(e *modelpb.APMEvent, aggregated bool) int {
	switch e.Type() {
	case modelpb.TransactionEventType:
		return kindTransaction
	case modelpb.SpanEventType:
		return kindSpan
	case modelpb.ErrorEventType:
		return kindError
	case modelpb.MetricEventType:
		if aggregated {
			return kindAggregated
		}
		return kindMetricset
	}
	return kindLog
}

// Why events were not written.
const (
	reasonUnsampled     = "unsampled"
	reasonUnconvertible = "unconvertible"
	reasonRefused       = "refused"
)
