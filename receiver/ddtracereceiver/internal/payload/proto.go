package payload

import (
	"maps"
	"slices"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
)

// DecodeAgentPayload decodes the protobuf AgentPayload a Datadog Agent forwards to
// /api/v0.2/traces. Each tracer payload in it becomes one Payload; the agent's env and hostname
// fill in where a tracer payload has none.
func DecodeAgentPayload(b []byte) ([]Payload, error) {
	if err := checkAgentPayload(b); err != nil {
		return nil, err
	}
	var ap pb.AgentPayload
	if err := ap.UnmarshalVT(b); err != nil {
		return nil, err
	}
	out := make([]Payload, 0, len(ap.TracerPayloads))
	for _, tp := range ap.TracerPayloads {
		if tp == nil {
			continue
		}
		p := FromTracerPayload(tp)
		if p.Env == "" {
			p.Env = ap.Env
		}
		if p.Hostname == "" {
			p.Hostname = ap.HostName
		}
		out = append(out, p)
	}
	return out, nil
}

// FromTracerPayload converts the agent's TracerPayload type.
func FromTracerPayload(tp *pb.TracerPayload) Payload {
	p := Payload{
		ContainerID: tp.ContainerID, LanguageName: tp.LanguageName, LanguageVersion: tp.LanguageVersion,
		TracerVersion: tp.TracerVersion, RuntimeID: tp.RuntimeID, Env: tp.Env, Hostname: tp.Hostname,
		AppVersion: tp.AppVersion, Tags: sortedKVs(tp.Tags),
	}
	for _, c := range tp.Chunks {
		if c == nil {
			continue
		}
		spans, nils := FromSpans(c.Spans)
		p.NilSpans += nils
		p.Chunks = append(p.Chunks, Chunk{
			Priority: c.Priority, Origin: c.Origin, Tags: sortedKVs(c.Tags),
			DroppedTrace: c.DroppedTrace, Spans: spans,
		})
	}
	return p
}

// FromTraces converts the agent's decoded v0.4/v0.5 Traces (each trace a chunk with PriorityNone).
func FromTraces(ts pb.Traces) Payload {
	p := Payload{Chunks: make([]Chunk, len(ts))}
	for i, t := range ts {
		spans, nils := FromSpans(t)
		p.NilSpans += nils
		p.Chunks[i] = Chunk{Priority: PriorityNone, Spans: spans}
	}
	return p
}

// FromSpans converts the agent's span type; map entries are sorted by key. nil spans are skipped
// and counted (Payload.NilSpans).
func FromSpans(spans []*pb.Span) (out []Span, nils int) {
	out = make([]Span, 0, len(spans))
	for _, s := range spans {
		if s == nil {
			nils++
			continue
		}
		sp := Span{
			Service: s.Service, Name: s.Name, Resource: s.Resource, Type: s.Type, TraceID: s.TraceID,
			SpanID: s.SpanID, ParentID: s.ParentID, Start: s.Start, Duration: s.Duration, Error: s.Error,
			Meta: sortedKVs(s.Meta), Metrics: sortedKFs(s.Metrics), MetaStruct: sortedKBs(s.MetaStruct),
		}
		for _, l := range s.SpanLinks {
			if l == nil {
				continue
			}
			sp.Links = append(sp.Links, Link{
				TraceID: l.TraceID, TraceIDHigh: l.TraceIDHigh, SpanID: l.SpanID,
				Attributes: sortedKVs(l.Attributes), Tracestate: l.Tracestate, Flags: l.Flags,
			})
		}
		for _, e := range s.SpanEvents {
			if e == nil {
				continue
			}
			ev := Event{Name: e.Name, TimeUnixNano: e.TimeUnixNano}
			for _, k := range slices.Sorted(maps.Keys(e.Attributes)) {
				if v := e.Attributes[k]; v != nil {
					a := fromAnyValue(v)
					a.Key = k
					ev.Attributes = append(ev.Attributes, a)
				}
			}
			sp.Events = append(sp.Events, ev)
		}
		out = append(out, sp)
	}
	return out, nils
}

func fromAnyValue(v *pb.AttributeAnyValue) EventAttribute {
	a := EventAttribute{Type: AttributeType(v.Type), Str: v.StringValue, Bool: v.BoolValue, Int: v.IntValue, Double: v.DoubleValue}
	if v.ArrayValue != nil {
		for _, e := range v.ArrayValue.Values {
			if e == nil {
				continue
			}
			a.Array = append(a.Array, EventAttribute{Type: AttributeType(e.Type), Str: e.StringValue, Bool: e.BoolValue, Int: e.IntValue, Double: e.DoubleValue})
		}
	}
	return a
}
