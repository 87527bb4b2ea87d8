package tracesend

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"
)

// ddPlan turns the plan into Datadog spans, one chunk per trace, with 128-bit trace ids (the high
// half in _dd.p.tid on each chunk's first span, as tracers do) and what the receiver's default
// (semconv) mapping must show.
func ddPlan(service string, n int) ([][]tracemodel.DDSpan, []Span, error) {
	var chunks [][]tracemodel.DDSpan
	var sent []Span
	now := time.Now().UnixNano()
	for i, ps := range plan(n) {
		var ids [24]byte
		if _, err := rand.Read(ids[:]); err != nil {
			return nil, nil, err
		}
		s := tracemodel.DDSpan{
			Service: service, Name: ps.name, Resource: ps.name, SpanID: binary.BigEndian.Uint64(ids[16:]) | 1,
			Start: now, Duration: 1_500_000, Meta: map[string]string{"span.kind": strings.ToLower(ps.kind)}, Metrics: map[string]float64{},
		}
		high := binary.BigEndian.Uint64(ids[:8])
		if ps.parent < 0 {
			s.TraceID = binary.BigEndian.Uint64(ids[8:16]) | 1
			s.Meta["_dd.p.tid"] = fmt.Sprintf("%016x", high)
			chunks = append(chunks, nil)
		} else {
			parent := chunks[len(chunks)-1][0]
			s.TraceID, s.ParentID = parent.TraceID, chunks[len(chunks)-1][ps.parent-(i-len(chunks[len(chunks)-1]))].SpanID
			high, _ = strconv.ParseUint(parent.Meta["_dd.p.tid"], 16, 64)
		}
		if ps.failed {
			s.Error = 1
			s.Meta["error.message"] = "connection refused"
		}
		attrs := map[string]any{}
		if system, ok := ps.attrs["db.system"].(string); ok {
			// A database span as tracers tag it: the receiver names it "{operation} {table}".
			op, table, _ := strings.Cut(ps.name, " ")
			s.Meta["db.system"], s.Meta["db.operation"], s.Meta["db.sql.table"] = system, op, table
			attrs["db.system.name"], attrs["db.operation.name"], attrs["db.collection.name"] = system, op, table
		}
		for k, v := range ps.attrs {
			if k == "db.system" {
				continue
			}
			switch t := v.(type) {
			case string:
				s.Meta[k] = t
				attrs[k] = t
			case bool: // Datadog has no booleans: tracers send them as meta strings
				s.Meta[k] = strconv.FormatBool(t)
				attrs[k] = strconv.FormatBool(t)
			case int64:
				s.Metrics[k] = float64(t)
				attrs[k] = float64(t)
			case float64:
				s.Metrics[k] = t
				attrs[k] = t
			}
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], s)
		parentHex := ""
		if s.ParentID != 0 {
			parentHex = fmt.Sprintf("%016x", s.ParentID)
		}
		status := "" // Unset: the semconv mapping's status for spans without an error
		if ps.failed {
			status = "Error"
		}
		sent = append(sent, Span{
			TraceID: fmt.Sprintf("%016x%016x", high, s.TraceID), SpanID: fmt.Sprintf("%016x", s.SpanID),
			ParentSpanID: parentHex, Name: ps.name, Kind: ps.kind, StatusCode: status, Service: service, Attributes: attrs,
		})
	}
	return chunks, sent, nil
}

func sendDDTrace(ctx context.Context, ep Endpoints, service string, n int, path string, encode func([][]tracemodel.DDSpan) []byte) ([]Span, error) {
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
	return sendDDTrace(ctx, ep, service, n, "/v0.4/traces", tracemodel.EncodeDDTraceV04)
}

func sendDDTraceV05(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	return sendDDTrace(ctx, ep, service, n, "/v0.5/traces", tracemodel.EncodeDDTraceV05)
}
