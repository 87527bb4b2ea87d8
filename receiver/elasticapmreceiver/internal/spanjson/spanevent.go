package spanjson

import (
	"regexp"

	"github.com/elastic/apm-data/model/modelpb"
)

// What a span line becomes: the fields apm-data's v2 decoder sets for the same line
// (mapToSpanModel), field by field, in the same cases.

func (d *destination) hasService() bool {
	return d.serviceName.set || d.resource.set || d.kind.set
}

func (db *database) isSet() bool {
	return db.instance.set || db.link.set || db.statement.set || db.typ.set || db.user.set || db.rowsAffected != nil
}

func (h *httpContext) hasResponse() bool {
	return h.respStatusCode != nil || h.decoded != nil || h.encoded != nil || h.transfer != nil
}

// spanEvent is the messages every span event has, allocated at once.
type spanEvent struct {
	event  modelpb.APMEvent
	span   modelpb.Span
	fields modelpb.Event
	trace  modelpb.Trace
	tx     modelpb.Transaction
}

// event builds the span's event; Attach completes it with the request's metadata.
func (sp *span) event() *modelpb.APMEvent {
	all := &spanEvent{}
	e := &all.event
	e.Span, e.Event, e.Trace = &all.span, &all.fields, &all.trace
	sp.setSpanFields(e.Span)
	sp.setEventFields(e.Event)
	if sp.parentID.set {
		e.ParentId = sp.parentID.v
	}
	e.Timestamp = sp.timestamp * 1000
	e.Trace.Id = sp.traceID.v
	if sp.transactionID.set {
		all.tx.Id = sp.transactionID.v
		e.Transaction = &all.tx
	}
	if sp.dest.address.set || sp.dest.port != nil {
		e.Destination = &modelpb.Destination{Address: sp.dest.address.v}
		if sp.dest.port != nil {
			e.Destination.Port = *sp.dest.port
		}
	}
	sp.http.setOn(e)
	if target := sp.target(); target != nil {
		e.Service = &modelpb.Service{Target: target}
	}
	return e
}

func (sp *span) setSpanFields(out *modelpb.Span) {
	out.Id, out.Name, out.Sync, out.RepresentativeCount = sp.id.v, sp.name.v, sp.sync, 1
	if !sp.action.set && !sp.subtype.set {
		out.Type, out.Subtype, out.Action = splitType(sp.typ.v)
	} else {
		out.Type, out.Subtype, out.Action = sp.typ.v, sp.subtype.v, sp.action.v
	}
	if out.Type == "" {
		out.Type = "unknown"
	}
	if sp.hasRate {
		out.RepresentativeCount = representativeCount(sp.sampleRate)
	}
	if sp.db.isSet() {
		out.Db = &modelpb.DB{
			Instance: sp.db.instance.v, Link: sp.db.link.v, Statement: sp.db.statement.v,
			Type: sp.db.typ.v, UserName: sp.db.user.v, RowsAffected: sp.db.rowsAffected,
		}
	}
	if sp.dest.hasService() {
		out.DestinationService = &modelpb.DestinationService{
			Name: sp.dest.serviceName.v, Resource: sp.dest.resource.v, Type: sp.dest.kind.v,
		}
	}
}

// setEventFields sets the duration and the outcome, which apm-data derives from the HTTP status
// when the agent sent none: a span failed on a 4xx or 5xx.
func (sp *span) setEventFields(ev *modelpb.Event) {
	ev.Duration, ev.Outcome = durationNanos(sp.duration), outcomeOf(sp.outcome, sp.http.statusCode, 400)
}

// setOn writes the span's HTTP call: the method, the response (whose status the top-level
// status_code overrides), the URL.
func (h *httpContext) setOn(e *modelpb.APMEvent) {
	if h.method.set {
		e.Http = &modelpb.HTTP{Request: &modelpb.HTTPRequest{Method: h.method.v}}
	}
	if h.hasResponse() || h.statusCode != nil {
		if e.Http == nil {
			e.Http = &modelpb.HTTP{}
		}
		resp := &modelpb.HTTPResponse{DecodedBodySize: h.decoded, EncodedBodySize: h.encoded, TransferSize: h.transfer}
		if h.respStatusCode != nil {
			resp.StatusCode = *h.respStatusCode
		}
		if h.statusCode != nil {
			resp.StatusCode = *h.statusCode
		}
		e.Http.Response = resp
	}
	if h.url.set {
		e.Url = &modelpb.URL{Original: h.url.v}
	}
}

// target is the service the span called: the one the agent named with its type, else the one its
// destination resource names, else the one the agent named without a type.
func (sp *span) target() *modelpb.ServiceTarget {
	switch {
	case sp.targetType.set:
		return &modelpb.ServiceTarget{Type: sp.targetType.v, Name: sp.targetName.v}
	case sp.dest.resource.set:
		return targetOf(sp.dest.resource.v)
	case sp.targetName.set:
		return &modelpb.ServiceTarget{Name: sp.targetName.v}
	}
	return nil
}

// serviceTargetOfResource is apm-data's reading of a destination resource as "type/name", or as
// a name alone.
var serviceTargetOfResource = regexp.MustCompile(`^([a-z0-9]+)(?:/(\w+))?$`)

func targetOf(resource string) *modelpb.ServiceTarget {
	if m := serviceTargetOfResource.FindStringSubmatch(resource); len(m) == 3 {
		return &modelpb.ServiceTarget{Type: m[1], Name: m[2]}
	}
	return &modelpb.ServiceTarget{Name: resource}
}
