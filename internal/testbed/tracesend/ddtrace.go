package tracesend

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tinylib/msgp/msgp"
)

// ddSpan is a Datadog span as a tracer sends it.
type ddSpan struct {
	service, name, resource   string
	traceID, spanID, parentID uint64
	start, duration           int64
	isError                   int32
	spanType                  string // "" for a custom span: v0.4 then leaves the field out
	meta                      map[string]string
	metrics                   map[string]float64
}

// ddPlan turns the plan into Datadog spans, one chunk per trace, with 128-bit trace ids (the high
// half in _dd.p.tid on each chunk's first span, as tracers do) and what the receiver's default
// (semconv) mapping must show.
func ddPlan(service string, n int) ([][]ddSpan, []Span, error) {
	var chunks [][]ddSpan
	var sent []Span
	now := time.Now().UnixNano()
	for i, ps := range plan(n) {
		var ids [24]byte
		if _, err := rand.Read(ids[:]); err != nil {
			return nil, nil, err
		}
		s := ddSpan{
			service: service, name: ps.name, resource: ps.name, spanID: binary.BigEndian.Uint64(ids[16:]) | 1,
			start: now, duration: 1_500_000, meta: map[string]string{"span.kind": strings.ToLower(ps.kind)}, metrics: map[string]float64{},
		}
		high := binary.BigEndian.Uint64(ids[:8])
		if ps.parent < 0 {
			s.traceID = binary.BigEndian.Uint64(ids[8:16]) | 1
			s.meta["_dd.p.tid"] = fmt.Sprintf("%016x", high)
			chunks = append(chunks, nil)
		} else {
			parent := chunks[len(chunks)-1][0]
			s.traceID, s.parentID = parent.traceID, chunks[len(chunks)-1][ps.parent-(i-len(chunks[len(chunks)-1]))].spanID
			high, _ = strconv.ParseUint(parent.meta["_dd.p.tid"], 16, 64)
		}
		if ps.failed {
			s.isError = 1
			s.meta["error.message"] = "connection refused"
		}
		attrs := map[string]any{}
		if system, ok := ps.attrs["db.system"].(string); ok {
			// A database span as tracers tag it: the receiver names it "{operation} {table}".
			op, table, _ := strings.Cut(ps.name, " ")
			s.meta["db.system"], s.meta["db.operation"], s.meta["db.sql.table"] = system, op, table
			attrs["db.system.name"], attrs["db.operation.name"], attrs["db.collection.name"] = system, op, table
		}
		for k, v := range ps.attrs {
			if k == "db.system" {
				continue
			}
			switch t := v.(type) {
			case string:
				s.meta[k] = t
				attrs[k] = t
			case bool: // Datadog has no booleans: tracers send them as meta strings
				s.meta[k] = strconv.FormatBool(t)
				attrs[k] = strconv.FormatBool(t)
			case int64:
				s.metrics[k] = float64(t)
				attrs[k] = float64(t)
			case float64:
				s.metrics[k] = t
				attrs[k] = t
			}
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], s)
		parentHex := ""
		if s.parentID != 0 {
			parentHex = fmt.Sprintf("%016x", s.parentID)
		}
		status := "" // Unset: the semconv mapping's status for spans without an error
		if ps.failed {
			status = "Error"
		}
		sent = append(sent, Span{
			TraceID: fmt.Sprintf("%016x%016x", high, s.traceID), SpanID: fmt.Sprintf("%016x", s.spanID),
			ParentSpanID: parentHex, Name: ps.name, Kind: ps.kind, StatusCode: status, Service: service, Attributes: attrs,
		})
	}
	return chunks, sent, nil
}

// encodeV04 writes the v0.4 msgpack body: an array of traces, each an array of span maps.
func encodeV04(chunks [][]ddSpan) []byte {
	b := msgp.AppendArrayHeader(nil, uint32(len(chunks)))
	for _, c := range chunks {
		b = msgp.AppendArrayHeader(b, uint32(len(c)))
		for _, s := range c {
			fields := uint32(11)
			if s.spanType != "" {
				fields++
			}
			b = msgp.AppendMapHeader(b, fields)
			b = msgp.AppendString(msgp.AppendString(b, "service"), s.service)
			b = msgp.AppendString(msgp.AppendString(b, "name"), s.name)
			b = msgp.AppendString(msgp.AppendString(b, "resource"), s.resource)
			b = msgp.AppendUint64(msgp.AppendString(b, "trace_id"), s.traceID)
			b = msgp.AppendUint64(msgp.AppendString(b, "span_id"), s.spanID)
			b = msgp.AppendUint64(msgp.AppendString(b, "parent_id"), s.parentID)
			b = msgp.AppendInt64(msgp.AppendString(b, "start"), s.start)
			b = msgp.AppendInt64(msgp.AppendString(b, "duration"), s.duration)
			b = msgp.AppendInt32(msgp.AppendString(b, "error"), s.isError)
			if s.spanType != "" {
				b = msgp.AppendString(msgp.AppendString(b, "type"), s.spanType)
			}
			b = msgp.AppendMapHeader(msgp.AppendString(b, "meta"), uint32(len(s.meta)))
			for _, k := range slices.Sorted(maps.Keys(s.meta)) {
				b = msgp.AppendString(msgp.AppendString(b, k), s.meta[k])
			}
			b = msgp.AppendMapHeader(msgp.AppendString(b, "metrics"), uint32(len(s.metrics)))
			for _, k := range slices.Sorted(maps.Keys(s.metrics)) {
				b = msgp.AppendFloat64(msgp.AppendString(b, k), s.metrics[k])
			}
		}
	}
	return b
}

// encodeV05 writes the v0.5 dictionary format: [strings, traces of 12-element span arrays].
func encodeV05(chunks [][]ddSpan) []byte {
	dict := []string{""}
	index := map[string]uint32{"": 0}
	id := func(s string) uint32 {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = uint32(len(dict))
		dict = append(dict, s)
		return index[s]
	}
	body := msgp.AppendArrayHeader(nil, uint32(len(chunks)))
	for _, c := range chunks {
		body = msgp.AppendArrayHeader(body, uint32(len(c)))
		for _, s := range c {
			body = msgp.AppendArrayHeader(body, 12)
			body = msgp.AppendUint32(body, id(s.service))
			body = msgp.AppendUint32(body, id(s.name))
			body = msgp.AppendUint32(body, id(s.resource))
			body = msgp.AppendUint64(body, s.traceID)
			body = msgp.AppendUint64(body, s.spanID)
			body = msgp.AppendUint64(body, s.parentID)
			body = msgp.AppendInt64(body, s.start)
			body = msgp.AppendInt64(body, s.duration)
			body = msgp.AppendInt32(body, s.isError)
			body = msgp.AppendMapHeader(body, uint32(len(s.meta)))
			for _, k := range slices.Sorted(maps.Keys(s.meta)) {
				body = msgp.AppendUint32(msgp.AppendUint32(body, id(k)), id(s.meta[k]))
			}
			body = msgp.AppendMapHeader(body, uint32(len(s.metrics)))
			for _, k := range slices.Sorted(maps.Keys(s.metrics)) {
				body = msgp.AppendFloat64(msgp.AppendUint32(body, id(k)), s.metrics[k])
			}
			body = msgp.AppendUint32(body, id(s.spanType)) // the format always has the field: "" when untyped
		}
	}
	b := msgp.AppendArrayHeader(nil, 2)
	b = msgp.AppendArrayHeader(b, uint32(len(dict)))
	for _, s := range dict {
		b = msgp.AppendString(b, s)
	}
	return append(b, body...)
}

func sendDDTrace(ctx context.Context, ep Endpoints, service string, n int, path string, encode func([][]ddSpan) []byte) ([]Span, error) {
	chunks, sent, err := ddPlan(service, n)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+ep.DDTrace+path, bytes.NewReader(encode(chunks)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/msgpack")
	req.Header.Set("Datadog-Meta-Lang", "go")
	req.Header.Set("Datadog-Meta-Tracer-Version", "tracegate-tracesend")
	req.Header.Set("X-Datadog-Trace-Count", strconv.Itoa(len(chunks)))
	req.Header.Set("Datadog-Send-Real-Http-Status", "true")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ddtrace %s: %s: %s", path, resp.Status, body)
	}
	return sent, nil
}

func sendDDTraceV04(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	return sendDDTrace(ctx, ep, service, n, "/v0.4/traces", encodeV04)
}

func sendDDTraceV05(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	return sendDDTrace(ctx, ep, service, n, "/v0.5/traces", encodeV05)
}
