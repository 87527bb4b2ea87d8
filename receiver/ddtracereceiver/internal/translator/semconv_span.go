package translator

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// spanFacts are the tag values the semconv mapping writes only once it has seen all of a span's
// tags, and those the span name is made of.
type spanFacts struct {
	method, url, route                               string
	dbSystem, dbOperation, dbCollection, dbNamespace string
	msgSystem, msgOperation, msgDestination          string
	rpcFull, rpcService, rpcMethod, rpcSystem        string
	grpcCode                                         string
	serverAddress, hostPort, traceState              string
	aws                                              bool // rpcService and rpcMethod name an AWS SDK call
	queryText, peerService                           bool // a tag gave db.query.text, peer.service
}

// Span flags of OTLP (trace.proto SpanFlags): whether the parent's is-remote is known, and its
// value. Elastic's APM enrichment, among others, decides "entry span" (a transaction) from them.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// spanPlace is where a span sits in its trace: its kind, and whether its parent is in another
// service or process.
type spanPlace struct {
	kind   ptrace.SpanKind
	parent parentPlace
	// samplingPriority is the chunk's, set on the span that carries it (the chunk's root).
	samplingPriority    int64
	hasSamplingPriority bool
}

// fillSpanSemconv writes one span with the semconv mapping. It returns the event attributes
// dropped past MaxEventAttributes.
func (tr *translation) fillSpanSemconv(span ptrace.Span, s *payload.Span, info *spanInfo, high uint64, place spanPlace) int {
	setIDsAndTimes(span, s, high)
	setParentFlags(span, place.parent)
	span.SetKind(place.kind)
	resource := resourceOf(s)
	var facts spanFacts
	linksJSON, eventsJSON := tr.semconvAttributes(span.Attributes(), s, info, place, resource, &facts)
	span.SetName(facts.name(s, place.kind, resource))
	if facts.traceState != "" {
		span.TraceState().FromRaw(facts.traceState)
	}
	tr.t.setStatus(span, s)
	return fillLinksAndEvents(span, s, linksJSON, eventsJSON)
}

// setParentFlags says in the span's flags whether its parent is remote, when that is known.
func setParentFlags(span ptrace.Span, parent parentPlace) {
	switch parent {
	case parentLocal:
		span.SetFlags(flagHasIsRemote)
	case parentRemote:
		span.SetFlags(flagHasIsRemote | flagIsRemote)
	}
}

// semconvAttributes writes the span's attributes and reads its facts into f; it returns the span
// links and events meta JSON, if any.
func (tr *translation) semconvAttributes(attrs pcommon.Map, s *payload.Span, info *spanInfo, place spanPlace, resource string, f *spanFacts) (linksJSON, eventsJSON string) {
	rules, written := tr.rules.of(s)
	// An integration that renamed its span's service (_dd.base_service) names the service it
	// calls: the resource carries the application, the span that name as its peer service. (A
	// span-level service.name would win over the resource's in Elasticsearch's service.name.)
	renamedService := info.baseService != "" && info.baseService != s.Service
	// Database integrations without a query tag (dd-trace-go's database/sql) send the statement
	// as the resource only.
	queryFromResource := s.Type == "sql" && s.Resource != "" && s.Resource != s.Name
	written += countTrue(renamedService, queryFromResource, place.hasSamplingPriority) // their attributes
	w := newAttrWriter(attrs, written)
	// Datadog's own OTLP exporters keep these three, and the agent reads them back.
	w.putStr(keyOperationName, s.Name)
	w.putStr(keyResourceName, resource)
	if s.Type != "" {
		w.putStr(keySpanType, s.Type)
	}
	linksJSON, eventsJSON = semconvMeta(&w, s, f, rules[:len(s.Meta)])
	semconvMetrics(&w, s, f, rules[len(s.Meta):])
	for _, kb := range s.MetaStruct {
		w.putBytes(keyMetaStructPrefix+kb.Key, kb.Value)
	}
	f.write(&w, place.kind)
	if renamedService && !f.peerService {
		w.putStr(keyPeerService, s.Service)
	}
	if queryFromResource && !f.queryText {
		w.putStr(string(semconv.DBQueryTextKey), s.Resource)
	}
	if place.hasSamplingPriority {
		w.putInt(keySamplingPriority, place.samplingPriority)
	}
	w.finish()
	return linksJSON, eventsJSON
}

func countTrue(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

// of returns the rules of the span's meta keys, then of its metric keys, and says how many
// attributes the span will get (tags whose value is odd may add one): the map is sized once and
// exactly, as pdata allocates what EnsureCapacity asks for, and attributes are most of a span's
// memory. The rules stay valid until the call after next.
func (m *ruleMemo) of(s *payload.Span) (rules []tagRule, written int) {
	rules = m.rules[:0]
	written = 2 // operation.name, resource.name
	if s.Type != "" {
		written++
	}
	written += len(s.MetaStruct)
	var urls, serverAddresses, rpcParts int
	for i := range len(s.Meta) + len(s.Metrics) {
		var r tagRule
		if i < len(s.Meta) {
			r = m.metaRule(s, i)
		} else {
			r = m.metricRule(s, i-len(s.Meta))
		}
		rules = append(rules, r)
		switch r.action {
		case tagDrop, tagTraceState:
		case tagRPCService, tagRPCMethod, tagAWSService, tagAWSOperation:
			rpcParts++
		case tagURL:
			urls++
			if i < len(s.Meta) && strings.IndexByte(s.Meta[i].Value, '?') >= 0 {
				written++ // url.query
			}
		case tagHostPort, tagMessagingOperation:
			written += 2
		case tagRename:
			if r.key == string(semconv.ServerAddressKey) {
				serverAddresses++
			}
			written++
		default:
			written++
		}
	}
	if urls > 0 {
		written += 2 // url.scheme and url.path; or url.full and server.address (its port is rare)
		if serverAddresses > 0 {
			written--
		}
	}
	if rpcParts > 0 {
		written += 2 // rpc.method, rpc.system.name
	}
	m.prev, m.prevRules, m.rules = s, rules, m.prevRules
	return rules, written
}

// semconvMeta writes the span's meta under the conventions' names and reads the facts; it returns
// the span links and events meta JSON, if any.
func semconvMeta(w *attrWriter, s *payload.Span, f *spanFacts, rules []tagRule) (linksJSON, eventsJSON string) {
	queue := s.Type == "queue"
	for i, kv := range s.Meta {
		switch kv.Key {
		case "_dd.span_links":
			linksJSON = kv.Value
			continue
		case "events":
			eventsJSON = kv.Value
			continue
		}
		switch r := rules[i]; r.action {
		case tagKeep:
			if kv.Key == keyPeerService {
				f.peerService = true
			}
			w.putStr(kv.Key, kv.Value)
		case tagRename:
			f.note(r.key, kv.Value)
			w.putTyped(r.key, kv.Value, r.typ)
		case tagQueueOnly:
			if queue {
				w.putTyped(r.key, kv.Value, r.typ)
			} else {
				w.putStr(kv.Key, kv.Value)
			}
		case tagDrop:
		default:
			f.read(r.action, kv.Value)
		}
	}
	return linksJSON, eventsJSON
}

// semconvMetrics writes the span's metrics; where meta and a metric name the same attribute, the
// metric wins, as in contrib.
func semconvMetrics(w *attrWriter, s *payload.Span, f *spanFacts, rules []tagRule) {
	queue := s.Type == "queue"
	for i, kf := range s.Metrics {
		switch r := rules[i]; r.action {
		case tagKeep:
			w.putDouble(kf.Key, kf.Value)
		case tagRename:
			putNumber(w, r.key, kf.Value, r.typ)
		case tagQueueOnly:
			if queue {
				putNumber(w, r.key, kf.Value, r.typ)
			} else {
				w.putDouble(kf.Key, kf.Value)
			}
		case tagDrop:
		default:
			f.read(r.action, strconv.FormatFloat(kf.Value, 'f', -1, 64))
		}
	}
}

// putNumber writes a metric under a renamed key, in the key's type.
func putNumber(w *attrWriter, k string, v float64, typ valueType) {
	switch {
	case typ == typeInt && v == float64(int64(v)):
		w.putInt(k, int64(v))
	case typ == typeBool:
		w.putBool(k, v != 0)
	case typ == typeString || typ == typeStringSlice:
		w.putStr(k, strconv.FormatFloat(v, 'f', -1, 64)) // a partition or database index
	default:
		w.putDouble(k, v)
	}
}

// putTyped writes a meta value in the key's type; a value that does not parse stays a string.
func (w *attrWriter) putTyped(k, v string, typ valueType) {
	switch typ {
	case typeInt:
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			w.putInt(k, i)
			return
		}
	case typeBool:
		if b, err := strconv.ParseBool(v); err == nil {
			w.putBool(k, b)
			return
		}
	case typeStringSlice:
		w.putStrSlice(k, v)
		return
	}
	w.putStr(k, v)
}

// note keeps the renamed values that name the span.
func (f *spanFacts) note(key, v string) {
	switch key {
	case string(semconv.HTTPRouteKey):
		f.route = v
	case string(semconv.DBOperationNameKey):
		f.dbOperation = v
	case string(semconv.DBCollectionNameKey):
		f.dbCollection = v
	case string(semconv.DBNamespaceKey):
		f.dbNamespace = v
	case string(semconv.MessagingDestinationNameKey):
		f.msgDestination = v
	case string(semconv.ServerAddressKey):
		f.serverAddress = v
	case string(semconv.DBQueryTextKey):
		f.queryText = true
	}
}

// read keeps a value written later by write.
func (f *spanFacts) read(action tagAction, v string) {
	switch action {
	case tagMethod:
		f.method = v
	case tagURL:
		f.url = v
	case tagDBSystem:
		f.dbSystem = v
	case tagMessagingSystem:
		f.msgSystem = v
	case tagMessagingOperation:
		f.msgOperation = v
	case tagRPCFullMethod:
		f.rpcFull = v
	case tagRPCService:
		f.rpcService = v
	case tagRPCMethod:
		f.rpcMethod = v
	case tagRPCSystem:
		f.rpcSystem = v
	case tagGRPCCode:
		f.grpcCode = v
	case tagAWSService:
		f.rpcService, f.aws = v, true
	case tagAWSOperation:
		f.rpcMethod, f.aws = v, true
	case tagHostPort:
		f.hostPort = v
	case tagTraceState:
		f.traceState = v
	}
}
