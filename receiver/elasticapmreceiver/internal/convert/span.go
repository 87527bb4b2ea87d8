package convert

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/elastic/apm-data/model/modelpb"
)

// Transactions and spans become OpenTelemetry spans. The attributes are what an OpenTelemetry
// SDK would have recorded for the same operation, plus the facts only an Elastic agent knows
// (its transaction and span types, the result, sampling, dropped spans, stack traces). Fields
// Elastic's APM enrichment derives from the span itself (processor.event, timestamp.us, the
// durations, transaction.id and name, span.name, a success or failure outcome) are left to it,
// so the default path's documents do not carry them twice.

// The span flags' bits that say whether the parent is known to be remote (OTLP's SpanFlags).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// spanAttributes is how many attributes besides its labels a span mostly has.
const spanAttributes = 8

// fillSpan sets what transactions and spans share.
func (c *Converter) fillSpan(s ptrace.Span, e *modelpb.APMEvent, ts uint64) {
	// Room for the labels and the fields a span mostly has, so the attributes grow once.
	s.Attributes().EnsureCapacity(len(e.Labels) + len(e.NumericLabels) + spanAttributes)
	c.setIDs(s, e)
	s.SetStartTimestamp(pcommon.Timestamp(ts))
	s.SetEndTimestamp(pcommon.Timestamp(ts + e.GetEvent().GetDuration()))
	switch outcome := e.GetEvent().GetOutcome(); {
	case strings.EqualFold(outcome, "success"):
		s.Status().SetCode(ptrace.StatusCodeOk)
	case strings.EqualFold(outcome, "failure"):
		s.Status().SetCode(ptrace.StatusCodeError)
	default:
		// The enrichment would call an unset status a success: say what the agent said.
		s.Attributes().PutStr("event.outcome", "unknown")
	}
	// A transaction is where a trace enters a service, so its parent is in another process;
	// a span's is in the same one. Saying so lets the enrichment tell them apart the way the
	// agent did, whatever their kind.
	if e.Type() == modelpb.TransactionEventType && !s.ParentSpanID().IsEmpty() {
		s.SetFlags(flagHasIsRemote | flagIsRemote)
	} else {
		s.SetFlags(flagHasIsRemote)
	}
	s.SetKind(kindOf(e, c.inferKinds))
	c.putLinks(s, e)
	putEventContext(s.Attributes(), e)
}

// setIDs sets the span's trace, own and parent ids. A transaction's own id is its transaction id;
// an own id that is not a readable id is also kept as the agent sent it, in the attribute
// Kibana shows.
func (c *Converter) setIDs(s ptrace.Span, e *modelpb.APMEvent) {
	tid, ok := traceIDOf(e.GetTrace().GetId())
	if !ok {
		c.badID("trace", e.GetTrace().GetId())
	}
	s.SetTraceID(tid)
	own, key := e.GetSpan().GetId(), "span.id"
	if e.Type() == modelpb.TransactionEventType {
		own, key = e.GetTransaction().GetId(), "transaction.id"
	}
	sid, ok := spanIDOf(own)
	if !ok {
		c.badID(key, own)
		s.Attributes().PutStr(key, own)
	}
	s.SetSpanID(sid)
	pid, ok := spanIDOf(e.GetParentId())
	if !ok {
		c.badID("parent.id", e.GetParentId())
	}
	s.SetParentSpanID(pid)
}

// putParentlessSpan writes, for a span whose parent is missing or unreadable, the fields the
// enrichment derives for spans only: it takes a span without a parent for a transaction.
func putParentlessSpan(s ptrace.Span, e *modelpb.APMEvent) {
	if !s.ParentSpanID().IsEmpty() {
		return
	}
	m := s.Attributes()
	m.PutStr("processor.event", "span")
	m.PutInt("timestamp.us", int64(e.GetTimestamp()/1000))
	m.PutInt("span.duration.us", int64(e.GetEvent().GetDuration()/1000))
	m.PutStr("span.name", s.Name())
	if _, ok := m.Get("span.id"); !ok {
		m.PutStr("span.id", e.GetSpan().GetId())
	}
	m.PutDouble("span.representative_count", e.GetSpan().GetRepresentativeCount())
}

func (c *Converter) putLinks(s ptrace.Span, e *modelpb.APMEvent) {
	for _, l := range e.GetSpan().GetLinks() {
		link := s.Links().AppendEmpty()
		tid, ok1 := traceIDOf(l.GetTraceId())
		sid, ok2 := spanIDOf(l.GetSpanId())
		if !ok1 || !ok2 {
			c.badID("link", l.GetTraceId()+"/"+l.GetSpanId())
		}
		link.SetTraceID(tid)
		link.SetSpanID(sid)
	}
}

// fillTransaction writes a transaction's own attributes.
func fillTransaction(s ptrace.Span, e *modelpb.APMEvent) {
	t := e.GetTransaction()
	s.SetName(t.GetName())
	m := s.Attributes()
	putStr(m, "transaction.type", t.GetType())
	putStr(m, "transaction.result", t.GetResult())
	if !t.GetSampled() {
		// The enrichment assumes a span it sees was sampled.
		m.PutBool("transaction.sampled", false)
	}
	// How many transactions this one stands for (1/sample_rate; 0 for an unsampled one whose
	// agent reports its rate): the aggregation counts it so, as APM Server does. The enrichment
	// writes 1 where it is absent.
	if n := t.GetRepresentativeCount(); n != 1 {
		m.PutDouble("transaction.representative_count", n)
	}
	if n := t.GetSpanCount(); n != nil {
		putCount(m, "transaction.span_count.started", n.Started)
		putCount(m, "transaction.span_count.dropped", n.Dropped)
	}
	if q := t.GetMessage().GetQueueName(); q != "" {
		m.PutStr(string(semconv.MessagingDestinationNameKey), q)
	}
	putMessage(m, "transaction.", t.GetMessage())
	putExperience(m, t.GetUserExperience())
	putKeyValues(m, "transaction.custom", t.GetCustom())
	putStrings(m, "transaction.profiler_stack_trace_ids", t.GetProfilerStackTraceIds())
	putDroppedSpansStats(m, t.GetDroppedSpansStats())
	putMarks(m, t.GetMarks())
	putStr(m, "session.id", e.GetSession().GetId())
	if seq := e.GetSession().GetSequence(); seq != 0 {
		m.PutInt("session.sequence", clampInt(seq))
	}
}

// fillSpanEvent writes a span's own attributes.
func fillSpanEvent(s ptrace.Span, e *modelpb.APMEvent) {
	sp := e.GetSpan()
	s.SetName(sp.GetName())
	m := s.Attributes()
	putStr(m, "transaction.id", e.GetTransaction().GetId())
	putStr(m, "span.type", sp.GetType())
	putStr(m, "span.subtype", sp.GetSubtype())
	putStr(m, "span.action", sp.GetAction())
	putFlag(m, "span.sync", sp.Sync)
	if n := sp.GetRepresentativeCount(); n != 1 {
		m.PutDouble("span.representative_count", n)
	}
	putDatabase(m, sp)
	putMessaging(m, sp)
	if d := e.GetDestination(); d != nil {
		putStr(m, string(semconv.ServerAddressKey), d.Address)
		if d.Port != 0 {
			m.PutInt(string(semconv.ServerPortKey), int64(d.Port))
		}
	}
	if ds := sp.GetDestinationService(); ds != nil {
		putStr(m, "span.destination.service.resource", ds.Resource)
		putStr(m, "span.destination.service.name", ds.Name)
		putStr(m, "span.destination.service.type", ds.Type)
	}
	if target := e.GetService().GetTarget(); target != nil {
		m.PutStr("service.target.type", target.Type)
		m.PutStr("service.target.name", target.Name)
	}
	putComposite(m, sp.GetComposite())
	putStrings(m, "child.id", e.GetChildIds())
	putFrames(m, "span.stacktrace", sp.GetStacktrace())
	putParentlessSpan(s, e)
}

// putDatabase writes a database call. OpenTelemetry's db.system.name is the product, which
// Elastic agents give as the span subtype (postgresql); their db.type is the kind (sql).
func putDatabase(m pcommon.Map, sp *modelpb.Span) {
	db := sp.GetDb()
	if db == nil {
		return
	}
	system := db.Type
	if sp.Type == "db" && sp.Subtype != "" {
		system = sp.Subtype
	}
	putStr(m, string(semconv.DBSystemNameKey), system)
	putStr(m, string(semconv.DBNamespaceKey), db.Instance)
	putStr(m, string(semconv.DBQueryTextKey), db.Statement)
	putStr(m, "span.db.link", db.Link)
	putCount(m, "span.db.rows_affected", db.RowsAffected)
	putStr(m, "span.db.user.name", db.UserName)
}

// putMessaging writes a message sent or received: the agents' subtype is the messaging system
// and their action the operation.
func putMessaging(m pcommon.Map, sp *modelpb.Span) {
	msg := sp.GetMessage()
	if msg == nil {
		return
	}
	putStr(m, string(semconv.MessagingSystemKey), sp.Subtype)
	putStr(m, string(semconv.MessagingOperationNameKey), sp.Action)
	putStr(m, string(semconv.MessagingDestinationNameKey), msg.QueueName)
	putMessage(m, "span.", msg)
}

// putMessage writes what Elastic records of a message beyond its queue.
func putMessage(m pcommon.Map, prefix string, msg *modelpb.Message) {
	if msg == nil {
		return
	}
	putStr(m, prefix+"message.routing_key", msg.RoutingKey)
	putStr(m, prefix+"message.body", msg.Body)
	putCount(m, prefix+"message.age.ms", msg.AgeMillis)
	for _, h := range msg.Headers {
		putStrings(m, prefix+"message.headers."+h.GetKey(), h.GetValue())
	}
}

// compressionStrategies names the ways an agent folds similar consecutive spans into one.
var compressionStrategies = map[modelpb.CompressionStrategy]string{
	modelpb.CompressionStrategy_COMPRESSION_STRATEGY_EXACT_MATCH: "exact_match",
	modelpb.CompressionStrategy_COMPRESSION_STRATEGY_SAME_KIND:   "same_kind",
}

func putComposite(m pcommon.Map, c *modelpb.Composite) {
	if c == nil {
		return
	}
	if name, ok := compressionStrategies[c.CompressionStrategy]; ok {
		m.PutStr("span.composite.compression_strategy", name)
	}
	m.PutInt("span.composite.count", int64(c.Count))
	// The intake gives the folded spans' total in milliseconds.
	m.PutInt("span.composite.sum.us", time.Duration(c.Sum*float64(time.Millisecond)).Microseconds())
}

// putExperience writes a browser transaction's user experience metrics (RUM agents).
func putExperience(m pcommon.Map, ux *modelpb.UserExperience) {
	if ux == nil {
		return
	}
	m.PutDouble("transaction.experience.cls", ux.CumulativeLayoutShift)
	m.PutDouble("transaction.experience.fid", ux.FirstInputDelay)
	m.PutDouble("transaction.experience.tbt", ux.TotalBlockingTime)
	if lt := ux.LongTask; lt != nil {
		m.PutInt("transaction.experience.longtask.count", int64(lt.Count))
		m.PutDouble("transaction.experience.longtask.max", lt.Max)
		m.PutDouble("transaction.experience.longtask.sum", lt.Sum)
	}
}

// putDroppedSpansStats writes what the agent says of the spans it did not send, per destination.
func putDroppedSpansStats(m pcommon.Map, stats []*modelpb.DroppedSpanStats) {
	if len(stats) == 0 {
		return
	}
	list := m.PutEmptySlice("transaction.dropped_spans_stats")
	list.EnsureCapacity(len(stats))
	for _, st := range stats {
		if st == nil {
			continue
		}
		item := list.AppendEmpty().SetEmptyMap()
		putStr(item, "destination_service_resource", st.DestinationServiceResource)
		putStr(item, "outcome", st.Outcome)
		if d := st.Duration; d != nil {
			item.PutInt("duration.count", int64(d.Count))
			item.PutInt("duration.sum.us", int64(d.Sum))
		}
	}
}

// putMarks writes a browser transaction's navigation timing marks, by group and name.
func putMarks(m pcommon.Map, marks map[string]*modelpb.TransactionMark) {
	if len(marks) == 0 {
		return
	}
	groups := m.PutEmptyMap("transaction.marks")
	for name, mark := range marks {
		if mark == nil || len(mark.Measurements) == 0 {
			continue
		}
		group := groups.PutEmptyMap(name)
		for k, v := range mark.Measurements {
			group.PutDouble(k, v)
		}
	}
}

// kindOf is the span kind the agent sent (its OpenTelemetry bridge does), else, when infer is
// set, the one its event type implies (inferKind).
func kindOf(e *modelpb.APMEvent, infer bool) ptrace.SpanKind {
	switch strings.ToUpper(e.GetSpan().GetKind()) {
	case "SERVER":
		return ptrace.SpanKindServer
	case "CLIENT":
		return ptrace.SpanKindClient
	case "PRODUCER":
		return ptrace.SpanKindProducer
	case "CONSUMER":
		return ptrace.SpanKindConsumer
	case "INTERNAL":
		return ptrace.SpanKindInternal
	}
	if infer {
		return inferKind(e)
	}
	return ptrace.SpanKindUnspecified
}
