package tracesend

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jaegertracing/jaeger-idl/thrift-gen/jaeger"
)

// jaegerSpansPerPacket keeps a compact UDP packet far below the 65,000 bytes the Jaeger agent
// protocol allows.
const jaegerSpansPerPacket = 30

// jaegerBatch builds a Thrift batch from the plan, with ids of our own (Jaeger's ids are int64).
func jaegerBatch(service string, n int) (*jaeger.Batch, []Span, error) {
	p := plan(n)
	batch := &jaeger.Batch{Process: &jaeger.Process{
		ServiceName: service,
		Tags:        []*jaeger.Tag{{Key: "hostname", VType: jaeger.TagType_STRING, VStr: ptr("tracegate-test")}},
	}}
	var sent []Span
	now := time.Now()
	for _, ps := range p {
		var ids [24]byte
		if _, err := rand.Read(ids[:]); err != nil {
			return nil, nil, err
		}
		span := &jaeger.Span{
			TraceIdHigh:   int64(binary.BigEndian.Uint64(ids[0:8])),
			TraceIdLow:    int64(binary.BigEndian.Uint64(ids[8:16])),
			SpanId:        int64(binary.BigEndian.Uint64(ids[16:24]) | 1), // never the invalid 0
			OperationName: ps.name,
			StartTime:     now.UnixMicro(),
			Duration:      1500,
			Tags:          []*jaeger.Tag{{Key: "span.kind", VType: jaeger.TagType_STRING, VStr: ptr(strings.ToLower(ps.kind))}},
		}
		parent := ""
		if ps.parent >= 0 {
			ref := batch.Spans[ps.parent]
			span.TraceIdHigh, span.TraceIdLow, span.ParentSpanId = ref.TraceIdHigh, ref.TraceIdLow, ref.SpanId
			parent = sent[ps.parent].SpanID
		}
		for k, v := range ps.attrs {
			span.Tags = append(span.Tags, jaegerTag(k, v))
		}
		if ps.failed {
			span.Tags = append(span.Tags, &jaeger.Tag{Key: "error", VType: jaeger.TagType_BOOL, VBool: ptr(true)})
		}
		batch.Spans = append(batch.Spans, span)
		sent = append(sent, Span{
			TraceID:      hexID(uint64(span.TraceIdHigh), uint64(span.TraceIdLow)),
			SpanID:       hexID(uint64(span.SpanId)),
			ParentSpanID: parent,
			Name:         ps.name,
			Kind:         ps.kind,
			StatusCode:   statusName(ps.failed),
			Service:      service,
			Attributes:   jsonValues(ps.attrs),
		})
	}
	return batch, sent, nil
}

func jaegerTag(k string, v any) *jaeger.Tag {
	switch t := v.(type) {
	case int64:
		return &jaeger.Tag{Key: k, VType: jaeger.TagType_LONG, VLong: ptr(t)}
	case bool:
		return &jaeger.Tag{Key: k, VType: jaeger.TagType_BOOL, VBool: ptr(t)}
	case float64:
		return &jaeger.Tag{Key: k, VType: jaeger.TagType_DOUBLE, VDouble: ptr(t)}
	default:
		return &jaeger.Tag{Key: k, VType: jaeger.TagType_STRING, VStr: ptr(fmt.Sprint(t))}
	}
}

// sendJaegerThriftHTTP posts a binary-protocol Thrift batch to the collector's /api/traces.
func sendJaegerThriftHTTP(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	batch, sent, err := jaegerBatch(service, n)
	if err != nil {
		return nil, err
	}
	body, err := EncodeJaegerBinary(ctx, batch)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ep.JaegerHTTP+"/api/traces", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-thrift")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("jaeger thrift http: %s: %s", resp.Status, msg)
	}
	return sent, nil
}

// sendJaegerCompactUDP sends agent.emitBatch messages in the compact protocol over UDP, as the
// Jaeger client libraries do. UDP has no reply: a lost packet is only seen downstream.
func sendJaegerCompactUDP(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	batch, sent, err := jaegerBatch(service, n)
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("udp", ep.JaegerCompact)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	for start := 0; start < len(batch.Spans); start += jaegerSpansPerPacket {
		end := min(start+jaegerSpansPerPacket, len(batch.Spans))
		msg, err := EncodeJaegerEmitBatch(ctx, &jaeger.Batch{Process: batch.Process, Spans: batch.Spans[start:end]})
		if err != nil {
			return nil, err
		}
		if _, err := conn.Write(msg); err != nil {
			return nil, err
		}
	}
	return sent, nil
}

func hexID(parts ...uint64) string {
	b := make([]byte, 8*len(parts))
	for i, p := range parts {
		binary.BigEndian.PutUint64(b[8*i:], p)
	}
	return hex.EncodeToString(b)
}

func ptr[T any](v T) *T { return &v }
