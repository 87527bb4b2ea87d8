package elasticmappingprocessor

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// DocumentIDAttribute is the attribute the elasticsearch exporter (v0.148.0) takes a document's
// _id from when its traces_dynamic_id / logs_dynamic_id is enabled. In otel mode it is not stored.
const DocumentIDAttribute = "elasticsearch.document_id"

// A document id derived from what the document holds makes a resent copy (a client's retry, the
// buffer's redelivery or replay) a create Elasticsearch refuses with 409 instead of a duplicate.

// spanIDLen is the length of a span's document id: its trace id and span id in hex, unique per
// span by the conventions.
const spanIDLen = 2 * (len(pcommon.TraceID{}) + len(pcommon.SpanID{}))

// idScratch holds a span's id, then one of its events' ("." and the event's position).
type idScratch [spanIDLen + 1 + 20]byte

// setScopeDocumentIDs sets the document id on each span of spans and, in otel mode (events), on
// each of its span events (the span's id with the event's position: otel mode indexes each span
// event as a document of its own). A span without a trace or span id keeps Elasticsearch's
// generated id. All ids of the scope share one string: one allocation per scope, not per span.
func setScopeDocumentIDs(spans ptrace.SpanSlice, events bool) {
	var ids strings.Builder
	ids.Grow(spans.Len() * spanIDLen)
	var b idScratch
	for _, span := range spans.All() {
		if !hasDocumentID(span) {
			continue
		}
		ids.Write(spanDocumentID(&b, span))
		for i := range eventCount(span, events) {
			ids.Write(eventDocumentID(&b, i))
		}
	}
	all := ids.String()
	take := func(n int) (id string) { id, all = all[:n], all[n:]; return id }
	for _, span := range spans.All() {
		if !hasDocumentID(span) {
			continue
		}
		putID(span.Attributes(), take(spanIDLen))
		for i := range eventCount(span, events) {
			putID(span.Events().At(i).Attributes(), take(len(eventDocumentID(&b, i))))
		}
	}
}

func hasDocumentID(span ptrace.Span) bool {
	return !span.TraceID().IsEmpty() && !span.SpanID().IsEmpty()
}

func eventCount(span ptrace.Span, events bool) int {
	if !events {
		return 0
	}
	return span.Events().Len()
}

// spanDocumentID writes the span's id into b and returns it.
func spanDocumentID(b *idScratch, span ptrace.Span) []byte {
	tid, sid := span.TraceID(), span.SpanID()
	hex.Encode(b[:32], tid[:])
	hex.Encode(b[32:spanIDLen], sid[:])
	return b[:spanIDLen]
}

// eventDocumentID is the id of event i of the span whose id b holds.
func eventDocumentID(b *idScratch, i int) []byte {
	b[spanIDLen] = '.'
	return strconv.AppendInt(b[:spanIDLen+1], int64(i), 10)
}

// putID sets the id attribute, growing a full attribute list by exactly one: a list built to its
// size has no spare room, and append's doubling would copy it into twice the memory for one
// attribute more. (An id already there is replaced; the one slot spare then is harmless.)
func putID(attrs pcommon.Map, id string) {
	attrs.EnsureCapacity(attrs.Len() + 1)
	attrs.PutStr(DocumentIDAttribute, id)
}

// logHasher derives log record ids: a log record has no id of its own, so the id hashes its
// resource, scope, position in the request and content (128 bits of SHA-256: at a billion records
// per index a collision, which would lose a record, stays below 1e-20).
type logHasher struct {
	h   hash.Hash
	buf [8]byte
	sum [sha256.Size]byte
}

func newLogHasher() *logHasher { return &logHasher{h: sha256.New()} }

// setLogDocumentIDs sets a document id on every record of ld that has a timestamp or an observed
// timestamp. Without either, two equal records logged apart could not be told from a resent copy,
// so they keep Elasticsearch's generated ids.
func (lh *logHasher) setLogDocumentIDs(ld plog.Logs) {
	for ri, rl := range ld.ResourceLogs().All() {
		for si, sl := range rl.ScopeLogs().All() {
			for li, lr := range sl.LogRecords().All() {
				if lr.Timestamp() == 0 && lr.ObservedTimestamp() == 0 {
					continue
				}
				lr.Attributes().Remove(DocumentIDAttribute) // never part of its own hash
				lh.h.Reset()
				lh.uint(uint64(ri))
				lh.uint(uint64(si))
				lh.uint(uint64(li))
				lh.attributes(rl.Resource().Attributes())
				lh.str(sl.Scope().Name())
				lh.str(sl.Scope().Version())
				lh.attributes(sl.Scope().Attributes())
				lh.record(lr)
				sum := lh.h.Sum(lh.sum[:0])
				putID(lr.Attributes(), hex.EncodeToString(sum[:16]))
			}
		}
	}
}

func (lh *logHasher) record(lr plog.LogRecord) {
	lh.uint(uint64(lr.Timestamp()))
	lh.uint(uint64(lr.ObservedTimestamp()))
	lh.uint(uint64(lr.SeverityNumber()))
	lh.str(lr.SeverityText())
	lh.str(lr.EventName())
	tid, sid := lr.TraceID(), lr.SpanID()
	lh.h.Write(tid[:])
	lh.h.Write(sid[:])
	lh.uint(uint64(lr.Flags()))
	lh.value(lr.Body())
	lh.attributes(lr.Attributes())
}

func (lh *logHasher) uint(v uint64) {
	binary.LittleEndian.PutUint64(lh.buf[:], v)
	lh.h.Write(lh.buf[:])
}

// str writes s with its length, so that ("ab","c") and ("a","bc") differ.
func (lh *logHasher) str(s string) {
	lh.uint(uint64(len(s)))
	lh.h.Write([]byte(s))
}

func (lh *logHasher) attributes(m pcommon.Map) {
	lh.uint(uint64(m.Len()))
	for k, v := range m.All() {
		lh.str(k)
		lh.value(v)
	}
}

// value writes v's type and content; maps and slices recursively.
func (lh *logHasher) value(v pcommon.Value) {
	lh.uint(uint64(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		lh.str(v.Str())
	case pcommon.ValueTypeInt:
		lh.uint(uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		lh.uint(math.Float64bits(v.Double()))
	case pcommon.ValueTypeBool:
		if v.Bool() {
			lh.uint(1)
		} else {
			lh.uint(0)
		}
	case pcommon.ValueTypeBytes:
		lh.uint(uint64(v.Bytes().Len()))
		lh.h.Write(v.Bytes().AsRaw())
	case pcommon.ValueTypeMap:
		lh.attributes(v.Map())
	case pcommon.ValueTypeSlice:
		lh.uint(uint64(v.Slice().Len()))
		for _, e := range v.Slice().All() {
			lh.value(e)
		}
	}
}
