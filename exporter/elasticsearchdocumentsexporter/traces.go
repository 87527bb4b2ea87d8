package elasticsearchdocumentsexporter

import (
	"bytes"
	"context"
	"fmt"

	"github.com/elastic/go-docappender/v2"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter/internal/spandoc"
)

// otelMode is the only mapping a scope may ask for (elastic.mapping.mode): spans are written as
// the contrib exporter's otel mode writes them.
const otelMode = "otel"

// spanRef is where a document's span is in the batch, to hand it back when Elasticsearch
// refuses the document for now.
type spanRef struct{ resource, scope, span int }

// spanWriter is one call's scratch: the encoder, a document, its scope's tail, and the span of
// each document in the bulk request.
type spanWriter struct {
	enc  spandoc.Encoder
	doc  []byte
	tail []byte
	body bytes.Reader
	refs []spanRef
}

func (e *documentsExporter) spanWriter() *spanWriter {
	if w, ok := e.spanWriters.Get().(*spanWriter); ok {
		return w
	}
	return &spanWriter{}
}

// consumeTraces writes each span, and each of its events, as an OpenTelemetry-native document
// (spandoc) in one bulk request, with the outcomes of consumeLogs: a span whose document or one
// of whose event documents Elasticsearch refuses for now comes back whole in a retryable error
// (its copies already stored are refused with 409 when it has an _id).
func (e *documentsExporter) consumeTraces(ctx context.Context, td ptrace.Traces) error {
	bi, err := e.indexer(&e.traceIndexers, true)
	if err != nil {
		return err
	}
	w := e.spanWriter()
	defer func() {
		bi.Reset()
		e.traceIndexers.Put(bi)
		w.refs = w.refs[:0]
		e.spanWriters.Put(w)
	}()
	if err := e.addSpans(ctx, bi, w, td); err != nil {
		return err
	}
	if len(w.refs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	stat, err := e.flush(ctx, bi, tracesSignal)
	if err != nil {
		return e.requestFailed(ctx, err, len(w.refs))
	}
	again := ptrace.NewTraces()
	var last *spanRef
	var spans ptrace.SpanSlice
	e.answered(ctx, stat, func(pos int) {
		if pos >= len(w.refs) || (last != nil && *last == w.refs[pos]) {
			return // a span's second refused document: the span is already handed back
		}
		ref := w.refs[pos]
		if last == nil || last.resource != ref.resource || last.scope != ref.scope {
			rs := td.ResourceSpans().At(ref.resource)
			ss := rs.ScopeSpans().At(ref.scope)
			ars := again.ResourceSpans().AppendEmpty()
			rs.Resource().CopyTo(ars.Resource())
			ars.SetSchemaUrl(rs.SchemaUrl())
			ass := ars.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(ass.Scope())
			ass.SetSchemaUrl(ss.SchemaUrl())
			spans = ass.Spans()
		}
		td.ResourceSpans().At(ref.resource).ScopeSpans().At(ref.scope).Spans().At(ref.span).CopyTo(spans.AppendEmpty())
		last = &ref
	})
	if again.SpanCount() == 0 {
		return nil
	}
	return consumererror.NewTraces(fmt.Errorf("%d spans refused for now (429 or 5xx)", again.SpanCount()), again)
}

// addSpans puts the documents of every span and span event into the bulk request.
func (e *documentsExporter) addSpans(ctx context.Context, bi *docappender.BulkIndexer, w *spanWriter, td ptrace.Traces) error {
	var otherMode int64
	for i, rs := range td.ResourceSpans().All() {
		res := rs.Resource()
		for j, ss := range rs.ScopeSpans().All() {
			scope := ss.Scope()
			if mode, ok := scope.Attributes().Get(spandoc.AttrMapping); ok && mode.AsString() != otelMode {
				otherMode += int64(ss.Spans().Len())
				continue
			}
			w.tail = w.enc.Tail(w.tail[:0], res, rs.SchemaUrl(), scope, ss.SchemaUrl())
			// The scope's indexes serve every span and event without routing attributes of its own.
			spanIndex := spandoc.Route(spandoc.Traces, emptyMap, scope, res.Attributes())
			eventIndex := spandoc.Route(spandoc.Logs, emptyMap, scope, res.Attributes())
			for k, span := range ss.Spans().All() {
				idx := spanIndex
				if spandoc.Routes(span.Attributes()) {
					idx = spandoc.Route(spandoc.Traces, span.Attributes(), scope, res.Attributes())
				}
				w.doc = w.enc.AppendSpan(w.doc[:0], span, idx, w.tail)
				ref := spanRef{resource: i, scope: j, span: k}
				if err := w.addDocument(bi, idx.Name, attr(attrDocumentID, span.Attributes()), ref); err != nil {
					e.count(ctx, "refused", int64(td.SpanCount()))
					return consumererror.NewPermanent(err)
				}
				for _, ev := range span.Events().All() {
					idx := eventIndex
					if spandoc.Routes(ev.Attributes()) {
						idx = spandoc.Route(spandoc.Logs, ev.Attributes(), scope, res.Attributes())
					}
					w.doc = w.enc.AppendSpanEvent(w.doc[:0], span, ev, idx, w.tail)
					if err := w.addDocument(bi, idx.Name, attr(attrDocumentID, ev.Attributes()), ref); err != nil {
						e.count(ctx, "refused", int64(td.SpanCount()))
						return consumererror.NewPermanent(err)
					}
				}
			}
		}
	}
	if otherMode > 0 {
		e.count(ctx, "refused", otherMode)
		e.warnings.Warn("mapping_mode", "otelcol.exporter.elasticsearch_documents.documents{outcome=refused}",
			"spans whose scope asks for a mapping mode other than otel (elastic.mapping.mode) are refused: send them to the contrib elasticsearch exporter",
			zap.Int64("spans", otherMode))
	}
	return nil
}

// addDocument adds w.doc; the bulk request copies it, so the buffers serve the next document.
func (w *spanWriter) addDocument(bi *docappender.BulkIndexer, index, id string, ref spanRef) error {
	w.body.Reset(w.doc)
	if err := bi.Add(docappender.BulkIndexerItem{Index: index, DocumentID: id, Body: &w.body}); err != nil {
		return err
	}
	w.refs = append(w.refs, ref)
	return nil
}
