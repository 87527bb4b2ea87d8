// Package translator turns decoded Datadog trace payloads into OpenTelemetry traces. It follows
// contrib's datadogreceiver (span names, kinds, key renames, resource attributes) where that one
// keeps what the tracer sent, and differs where it loses or misreads it: integer attributes stay
// integers (contrib stores them as strings or doubles), error tags become the status message and an
// exception event, container.id is read on every endpoint version, the high half of a 128-bit trace
// id is resolved per chunk, span link flags lose the tracers' "flags set" bit, and the same payload
// always gives the same resources in the same order.
package translator

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// SchemaURL is the semantic conventions version the attribute names follow.
const SchemaURL = semconv.SchemaURL

// ScopeName is the instrumentation scope of every translated span, as in contrib.
const ScopeName = "Datadog"

// Drop reasons counted in Result.Dropped.
const (
	DropZeroTraceID = "zero_trace_id"
	DropZeroSpanID  = "zero_span_id"
	// DropNilSpan counts nil entries of span arrays (payload.Payload.NilSpans).
	DropNilSpan = "nil_span"
)

// Mapping is how Datadog spans become OpenTelemetry spans.
type Mapping string

const (
	// MappingSemconv follows OpenTelemetry's semantic conventions: span names by kind of call,
	// attributes under the conventions' names, process facts on the resource only, no tracer
	// bookkeeping, parent-is-remote span flags. The default.
	MappingSemconv Mapping = "semconv"
	// MappingDatadogReceiver keeps contrib datadogreceiver's output (Datadog operation names,
	// tags as sent with contrib's renames, dd.span.Resource and decimal id copies).
	MappingDatadogReceiver Mapping = "datadogreceiver"
)

// Options change the translation.
type Options struct {
	// Mapping selects the mapping; "" is MappingSemconv.
	Mapping Mapping
	// TraceIDCacheSize bounds the fallback cache of 128-bit trace id high halves (0 disables it).
	TraceIDCacheSize int
	// StatusOKWithoutError gives spans without an error the status Ok, as contrib does; false
	// leaves them Unset, as the OpenTelemetry specification wants for instrumentation.
	StatusOKWithoutError bool
}

// Headers are what the tracer said about itself in request headers; they win over the payload.
type Headers struct {
	Lang          string // Datadog-Meta-Lang
	LangVersion   string // Datadog-Meta-Lang-Version
	TracerVersion string // Datadog-Meta-Tracer-Version
	ContainerID   string // from Datadog-Container-ID or Datadog-Entity-ID
	// ComputedTopLevel (Datadog-Client-Computed-Top-Level) says the tracer marked its top-level
	// spans with _dd.top_level: a span without the mark whose parent is not in the payload has a
	// local parent that another flush carries.
	ComputedTopLevel bool
}

// Result is a translation: the traces and the spans dropped on the way, by reason.
type Result struct {
	Traces  ptrace.Traces
	Spans   int
	Dropped map[string]int
	// DroppedEventAttributes are span event attributes past MaxEventAttributes (each event also
	// carries its own count).
	DroppedEventAttributes int
}

// Translator converts payloads. It is safe for concurrent use.
type Translator struct {
	opts    Options
	cache   *idCache
	semconv bool
	memos   sync.Pool // *ruleMemo: the semconv mapping's per-span rules, reused across requests
}

// New returns a Translator.
func New(opts Options) *Translator {
	t := &Translator{opts: opts, cache: newIDCache(opts.TraceIDCacheSize), semconv: opts.Mapping != MappingDatadogReceiver}
	t.memos.New = func() any { return newRuleMemo() }
	return t
}

// resourceKey groups spans into resources.
type resourceKey struct {
	service, env, version, host, container string
	runtimeID                              string // the tracer's process: service.instance.id
	pid                                    int64
	lang, langVersion, tracerVersion       string // from the payload or headers: one per payload
}

type group struct {
	key    resourceKey
	tags   []payload.KV
	scopes []*scopeGroup // in the order they first appear
	last   *scopeGroup
}

// scopeGroup is the spans of one instrumentation scope.
type scopeGroup struct {
	name  string
	spans ptrace.SpanSlice
}

// spansOf returns the span slice of scope name, adding it if it is new; spans has room for
// capacity spans when it is the group's first scope.
func (g *group) spansOf(name string, capacity int) ptrace.SpanSlice {
	if g.last != nil && g.last.name == name {
		return g.last.spans
	}
	for _, sg := range g.scopes {
		if sg.name == name {
			g.last = sg
			return sg.spans
		}
	}
	sg := &scopeGroup{name: name, spans: ptrace.NewSpanSlice()}
	if len(g.scopes) == 0 {
		sg.spans.EnsureCapacity(capacity)
	}
	g.scopes = append(g.scopes, sg)
	g.last = sg
	return sg.spans
}

// ToTraces translates payloads (one for most endpoints, several for /api/v0.2).
func (t *Translator) ToTraces(payloads []payload.Payload, h Headers) Result {
	spans := spanCount(payloads)
	tr := translation{t: t, h: h, res: Result{Traces: ptrace.NewTraces()}, groups: resourceGroups{firstCapacity: spans}}
	if t.semconv {
		tr.rules = t.memos.Get().(*ruleMemo)
		defer func() {
			// A hostile span of millions of tags grew the slices: let them go rather than pin them.
			if tr.rules.reset() <= maxPooledRules {
				t.memos.Put(tr.rules)
			}
		}()
	}
	if !t.semconv {
		tr.ids.reserve(spans)
	}
	for pi := range payloads {
		tr.payload(&payloads[pi])
	}
	tr.build()
	return tr.res
}

// translation is the state of one ToTraces call.
type translation struct {
	t      *Translator
	h      Headers
	res    Result
	groups resourceGroups
	ids    decimalIDs // the datadogreceiver mapping's decimal id attributes
	rules  *ruleMemo  // the semconv mapping's rules of the span being translated and the one before
}

func (tr *translation) payload(p *payload.Payload) {
	h := tr.h
	lang := firstNonEmpty(h.Lang, p.LanguageName)
	langV, tracerV := firstNonEmpty(h.LangVersion, p.LanguageVersion), firstNonEmpty(h.TracerVersion, p.TracerVersion)
	container := firstNonEmpty(p.ContainerID, h.ContainerID)
	// The payload's facts are looked for only when a chunk lacks one of its own.
	var payloadProc process
	payloadScanned := false
	payloadFacts := func() process {
		if !payloadScanned {
			payloadProc, payloadScanned = processOf(p, nil).or(process{runtimeID: p.RuntimeID}), true // v0.7 has it per payload
		}
		return payloadProc
	}
	tr.res.dropN(DropNilSpan, p.NilSpans)
	for ci := range p.Chunks {
		c := &p.Chunks[ci]
		// Per chunk (a trace, whose root carries them), then per payload (a chunk of a partial
		// flush has no root): a payload a forwarder batched may hold several processes.
		proc := processOf(p, c)
		if !proc.complete() {
			proc = proc.or(payloadFacts())
		}
		high := tr.t.chunkTraceIDHigh(c)
		// The priority goes on the span it was read from (the root for v0.7's own), once.
		priority, carrier, hasPriority := c.SamplingPriority(c.Root())
		parents := chunkParents{spans: c.Spans}
		for si := range c.Spans {
			s := &c.Spans[si]
			if s.TraceID == 0 {
				tr.res.drop(DropZeroTraceID)
				continue
			}
			if s.SpanID == 0 {
				tr.res.drop(DropZeroSpanID)
				continue
			}
			info := scanSpan(s)
			key := resourceKeyOf(&info, s, p, container, proc)
			key.lang, key.langVersion, key.tracerVersion = firstNonEmpty(lang, firstNonEmpty(info.lang, proc.lang)), langV, tracerV
			place := spanPlace{samplingPriority: priority, hasSamplingPriority: hasPriority && s == carrier}
			tr.span(tr.groups.of(key, p.Tags), s, &info, high, &parents, place)
			tr.res.Spans++
		}
	}
}

// span translates one span into its resource's group; place carries its sampling priority.
func (tr *translation) span(g *group, s *payload.Span, info *spanInfo, high uint64, parents *chunkParents, place spanPlace) {
	if tr.t.semconv {
		span := g.spansOf(info.scopeName(), tr.groups.firstCapacity).AppendEmpty()
		place.kind = semconvKind(info.kind, s.Type, s.Name)
		place.parent = parents.place(s, g.key.service, place.kind, info.topLevel, tr.h.ComputedTopLevel)
		tr.res.DroppedEventAttributes += tr.fillSpanSemconv(span, s, info, high, place)
		return
	}
	span := g.spansOf(ScopeName, tr.groups.firstCapacity).AppendEmpty()
	spanDec, traceDec := tr.ids.of(s)
	tr.res.DroppedEventAttributes += tr.t.fillSpan(span, s, info, high, spanDec, traceDec)
	if place.hasSamplingPriority {
		span.Attributes().PutInt(keySamplingPriority, place.samplingPriority)
	}
}

// build moves the groups into the result, resources sorted by what identifies them, so that the
// output is deterministic.
func (tr *translation) build() {
	order := tr.groups.order
	slices.SortStableFunc(order, func(a, b *group) int {
		return cmp.Or(cmp.Compare(a.key.service, b.key.service), cmp.Compare(a.key.env, b.key.env),
			cmp.Compare(a.key.version, b.key.version), cmp.Compare(a.key.host, b.key.host),
			cmp.Compare(a.key.container, b.key.container), cmp.Compare(a.key.pid, b.key.pid),
			cmp.Compare(a.key.runtimeID, b.key.runtimeID))
	})
	rss := tr.res.Traces.ResourceSpans()
	rss.EnsureCapacity(len(order))
	for _, g := range order {
		rs := rss.AppendEmpty()
		rs.SetSchemaUrl(SchemaURL)
		if tr.t.semconv {
			fillResourceSemconv(rs.Resource().Attributes(), g)
		} else {
			fillResource(rs.Resource().Attributes(), g)
		}
		rs.ScopeSpans().EnsureCapacity(len(g.scopes))
		for _, sg := range g.scopes {
			ss := rs.ScopeSpans().AppendEmpty()
			if !tr.t.semconv {
				// The resource's schema URL covers the scope's too; contrib repeats it, and the
				// exporter writes it into every document (52 bytes).
				ss.SetSchemaUrl(SchemaURL)
			}
			ss.Scope().SetName(sg.name)
			ss.Scope().SetVersion(g.key.tracerVersion)
			sg.spans.MoveAndAppendTo(ss.Spans())
		}
	}
}

// resourceGroups collects the spans of each resource, in the order the resources first appear.
type resourceGroups struct {
	order []*group
	byKey map[resourceKey]*group // built only past maxScannedGroups: most requests have one resource
	last  *group                 // spans of one resource usually come together
	// firstCapacity is the room the first group gets for spans (all of the request's, as most
	// requests have one resource), so that its span slice is not grown span after span.
	firstCapacity int
}

// maxPooledRules is the largest rules slice kept for reuse (32 bytes per rule).
const maxPooledRules = 4096

// maxScannedGroups is how many groups are searched by comparing keys before a map is worth it.
const maxScannedGroups = 8

// of returns the group of key, adding it (with the payload's tags) if it is new.
func (gs *resourceGroups) of(key resourceKey, tags []payload.KV) *group {
	if gs.last != nil && gs.last.key == key {
		return gs.last
	}
	g := gs.find(key)
	if g == nil {
		g = &group{key: key, tags: tags}
		gs.order = append(gs.order, g)
		if gs.byKey != nil {
			gs.byKey[key] = g
		}
		if len(gs.order) > 1 {
			gs.firstCapacity = 0 // only the first scope of the first group gets the room
		}
	}
	gs.last = g
	return g
}

func (gs *resourceGroups) find(key resourceKey) *group {
	if gs.byKey != nil {
		return gs.byKey[key]
	}
	for _, g := range gs.order {
		if g.key == key {
			return g
		}
	}
	if len(gs.order) >= maxScannedGroups {
		gs.byKey = make(map[resourceKey]*group, 2*len(gs.order))
		for _, g := range gs.order {
			gs.byKey[g.key] = g
		}
	}
	return nil
}

func spanCount(payloads []payload.Payload) int {
	n := 0
	for i := range payloads {
		n += payloads[i].SpanCount()
	}
	return n
}

func (r *Result) drop(reason string) { r.dropN(reason, 1) }

func (r *Result) dropN(reason string, n int) {
	if n == 0 {
		return
	}
	if r.Dropped == nil {
		r.Dropped = map[string]int{}
	}
	r.Dropped[reason] += n
}

// spanInfo holds the meta and metric values the translation consults, found in one pass.
type spanInfo struct {
	baseService, env, version, host, kind, peerHost, runtimeID string
	component, lang                                            string
	pid                                                        int64
	topLevel                                                   bool // _dd.top_level (or _top_level) is 1
}

// scopeName is the semconv mapping's instrumentation scope: the integration (component tag).
func (info *spanInfo) scopeName() string {
	if info.component != "" {
		return info.component
	}
	return semconvScopeName
}

// semconvScopeName is the scope of spans without a component tag (custom instrumentation).
const semconvScopeName = "datadog"

func scanSpan(s *payload.Span) spanInfo {
	var info spanInfo
	for _, kv := range s.Meta { // later values win, as in the agent's maps
		switch kv.Key {
		case "_dd.base_service":
			info.baseService = kv.Value
		case "env":
			info.env = kv.Value
		case "version":
			info.version = kv.Value
		case "_dd.hostname":
			info.host = kv.Value
		case "span.kind":
			info.kind = kv.Value
		case "peer.hostname":
			info.peerHost = kv.Value
		case "runtime-id":
			info.runtimeID = kv.Value
		case "component":
			info.component = kv.Value
		case "language":
			info.lang = kv.Value
		}
	}
	for _, kf := range s.Metrics {
		switch kf.Key {
		case "process_id":
			if kf.Value == float64(int64(kf.Value)) {
				info.pid = int64(kf.Value)
			}
		case "_dd.top_level", "_top_level":
			info.topLevel = kf.Value == 1
		}
	}
	return info
}

// process is what a payload says about the process that sent it. Tracers put `process_id` and
// `_dd.hostname` on the local root span only (dd-trace-go, -java, -py, -rb), but every span of a
// payload comes from that one process: taken per span, each trace would become two resources,
// and its child spans would have no process.pid or host.name.
type process struct {
	pid       int64
	host      string
	runtimeID string // `runtime-id`, one per tracer instance
	lang      string // `language`, for tracers that send no Datadog-Meta-Lang
	// env and version are the application's (DD_ENV, DD_VERSION): integrations' spans may lack them.
	env, version string
}

// or fills what proc lacks from fallback.
func (proc process) or(fallback process) process {
	if proc.pid == 0 {
		proc.pid = fallback.pid
	}
	if proc.host == "" {
		proc.host = fallback.host
	}
	if proc.runtimeID == "" {
		proc.runtimeID = fallback.runtimeID
	}
	if proc.lang == "" {
		proc.lang = fallback.lang
	}
	if proc.env == "" {
		proc.env = fallback.env
	}
	if proc.version == "" {
		proc.version = fallback.version
	}
	return proc
}

// complete reports whether every fact is known.
func (proc process) complete() bool { return proc.pid != 0 && proc.host != "" && proc.runtimeID != "" }

// processOf finds the first `process_id` metric, `_dd.hostname` and `runtime-id` in the spans of
// chunk c, or of the whole payload when c is nil; each span's meta is walked once, and the walk
// stops when all three are known (usually at a chunk's root).
func processOf(p *payload.Payload, c *payload.Chunk) process {
	chunks := p.Chunks
	if c != nil {
		chunks = []payload.Chunk{*c}
	}
	var proc process
	for ci := range chunks {
		for si := range chunks[ci].Spans {
			s := &chunks[ci].Spans[si]
			if proc.pid == 0 {
				if pid, ok := s.Metric("process_id"); ok && pid == float64(int64(pid)) {
					proc.pid = int64(pid)
				}
			}
			for _, kv := range s.Meta {
				var fact *string
				switch kv.Key { // a switch: one comparison chain by length, not five
				case "_dd.hostname":
					fact = &proc.host
				case "runtime-id":
					fact = &proc.runtimeID
				case "language":
					fact = &proc.lang
				case "env":
					fact = &proc.env
				case "version":
					fact = &proc.version
				default:
					continue
				}
				if *fact == "" {
					*fact = kv.Value
				}
			}
			if proc.complete() {
				return proc
			}
		}
	}
	return proc
}

// resourceKeyOf groups a span: its own values first, then the payload's and the process's.
func resourceKeyOf(info *spanInfo, s *payload.Span, p *payload.Payload, container string, proc process) resourceKey {
	pid := info.pid
	if pid == 0 {
		pid = proc.pid
	}
	k := resourceKey{
		service: s.Service, container: container, pid: pid, runtimeID: firstNonEmpty(info.runtimeID, proc.runtimeID),
		env: firstNonEmpty(info.env, firstNonEmpty(p.Env, proc.env)), version: firstNonEmpty(info.version, firstNonEmpty(p.AppVersion, proc.version)),
		host: firstNonEmpty(info.host, firstNonEmpty(p.Hostname, proc.host)),
	}
	if info.baseService != "" {
		// The integration renamed the span's service; the application is the base service.
		k.service = info.baseService
	}
	return k
}

func fillResource(attrs pcommon.Map, g *group) {
	w := newAttrWriter(attrs, 10+len(g.tags))
	for _, kv := range g.tags {
		if kv.Value != "" {
			w.putStr(otelKey(kv.Key), kv.Value)
		}
	}
	w.finish()
	putProcessFacts(attrs, &g.key)
	attrs.PutStr(string(semconv.TelemetrySDKNameKey), "Datadog")
	lang := g.key.lang
	if lang == ".NET" {
		lang = "dotnet"
	}
	putIfSet(attrs, string(semconv.TelemetrySDKLanguageKey), lang)
	if g.key.tracerVersion != "" {
		attrs.PutStr(string(semconv.TelemetrySDKVersionKey), "Datadog-"+g.key.tracerVersion)
	}
	putIfSet(attrs, string(semconv.ProcessRuntimeVersionKey), g.key.langVersion)
}

// putProcessFacts writes what identifies the resource: both mappings put it the same way.
func putProcessFacts(attrs pcommon.Map, key *resourceKey) {
	attrs.PutStr(string(semconv.ServiceNameKey), key.service)
	putIfSet(attrs, string(semconv.DeploymentEnvironmentNameKey), key.env)
	putIfSet(attrs, string(semconv.ServiceVersionKey), key.version)
	putIfSet(attrs, string(semconv.HostNameKey), key.host)
	putIfSet(attrs, string(semconv.ContainerIDKey), key.container)
	if key.pid != 0 {
		attrs.PutInt(string(semconv.ProcessPIDKey), key.pid)
	}
	putIfSet(attrs, string(semconv.ServiceInstanceIDKey), key.runtimeID)
}

func putIfSet(m pcommon.Map, k, v string) {
	if v != "" {
		m.PutStr(k, v)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// chunkTraceIDHigh resolves the high 64 bits of the chunk's trace id: the chunk's _dd.p.tid tag
// (v0.7), else the first span in the chunk that carries it, else the fallback cache.
func (t *Translator) chunkTraceIDHigh(c *payload.Chunk) uint64 {
	tid := ""
	for _, kv := range c.Tags {
		if kv.Key == "_dd.p.tid" {
			tid = kv.Value
		}
	}
	for i := 0; tid == "" && i < len(c.Spans); i++ {
		tid, _ = c.Spans[i].MetaValue("_dd.p.tid")
	}
	var low uint64
	if len(c.Spans) > 0 {
		low = c.Spans[0].TraceID
	}
	if high, ok := parseTraceIDHigh(tid); ok {
		if low != 0 {
			t.cache.put(low, high)
		}
		return high
	}
	if high, ok := t.cache.get(low); ok {
		return high
	}
	return 0
}

// parseTraceIDHigh parses a _dd.p.tid value: 16 hex digits. The length is checked first, so a
// chunk without the tag costs no error allocation.
func parseTraceIDHigh(tid string) (uint64, bool) {
	if len(tid) != 16 {
		return 0, false
	}
	high, err := strconv.ParseUint(tid, 16, 64)
	return high, err == nil
}

// resourceOf is the span's resource, its name when it has none (as the agent's normalizer does).
func resourceOf(s *payload.Span) string {
	if s.Resource == "" {
		return s.Name
	}
	return s.Resource
}

func traceID(high, low uint64) pcommon.TraceID {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], high)
	binary.BigEndian.PutUint64(id[8:], low)
	return id
}

func spanID(id uint64) pcommon.SpanID {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], id)
	return b
}

// fillSpan writes one span with the datadogreceiver mapping.
// It returns the event attributes dropped past MaxEventAttributes.
func (t *Translator) fillSpan(span ptrace.Span, s *payload.Span, info *spanInfo, high uint64, spanDec, traceDec string) int {
	setIDsAndTimes(span, s, high)
	attrs := span.Attributes()
	w := newAttrWriter(attrs, len(s.Meta)+len(s.Metrics)+len(s.MetaStruct)+4)
	w.putStr(keyDDSpanResource, resourceOf(s))
	w.putStr(keyDatadogSpanID, spanDec)
	w.putStr(keyDatadogTraceID, traceDec)
	linksJSON, eventsJSON := putRenamedTags(&w, s)
	for _, kb := range s.MetaStruct {
		w.putBytes(keyMetaStructPrefix+kb.Key, kb.Value)
	}
	if info.baseService != "" && info.baseService != s.Service {
		// The resource carries the base service; keep the integration's own name on the span.
		w.putStr(string(semconv.ServiceNameKey), s.Service)
	}
	w.finish()

	span.SetKind(spanKind(info.kind, s.Type))
	if k := span.Kind(); info.peerHost != "" && (k == ptrace.SpanKindClient || k == ptrace.SpanKindProducer || k == ptrace.SpanKindConsumer) {
		if _, ok := attrs.Get(string(semconv.ServerAddressKey)); !ok {
			attrs.PutStr(string(semconv.ServerAddressKey), info.peerHost)
		}
	}
	span.SetName(spanName(s, span, attrs))
	t.setStatus(span, s)
	return fillLinksAndEvents(span, s, linksJSON, eventsJSON)
}

// putRenamedTags writes the span's meta and metrics under contrib's renames, integers of the
// conventions as integers; it returns the span links and events meta JSON, if any.
func putRenamedTags(w *attrWriter, s *payload.Span) (linksJSON, eventsJSON string) {
	for _, kv := range s.Meta {
		switch kv.Key {
		case "_dd.span_links":
			linksJSON = kv.Value
			continue
		case "events":
			eventsJSON = kv.Value
			continue
		case "_dd.span_events.has_exception":
			continue
		}
		k := otelKey(kv.Key)
		if isIntKey(k) {
			if i, err := strconv.ParseInt(kv.Value, 10, 64); err == nil {
				w.putInt(k, i)
				continue
			}
		}
		w.putStr(k, kv.Value)
	}
	// Metrics come after meta: where both name the same attribute, the metric wins.
	for _, kf := range s.Metrics {
		k := otelKey(kf.Key)
		if isIntKey(k) && kf.Value == float64(int64(kf.Value)) {
			w.putInt(k, int64(kf.Value))
			continue
		}
		w.putDouble(k, kf.Value)
	}
	return linksJSON, eventsJSON
}

// fillLinksAndEvents writes the span's links and events, native or from their meta JSON; meta
// JSON that cannot be read (or would decode beyond the bound) stays as the attribute it came as.
// It returns the event attributes dropped past MaxEventAttributes.
func fillLinksAndEvents(span ptrace.Span, s *payload.Span, linksJSON, eventsJSON string) int {
	if !fillLinks(span.Links(), s, linksJSON) {
		span.Attributes().PutStr("_dd.span_links", linksJSON)
	}
	droppedEventAttributes, ok := fillEvents(span.Events(), s, eventsJSON)
	if !ok {
		span.Attributes().PutStr("events", eventsJSON)
	}
	return droppedEventAttributes
}

func setIDsAndTimes(span ptrace.Span, s *payload.Span, high uint64) {
	span.SetTraceID(traceID(high, s.TraceID))
	span.SetSpanID(spanID(s.SpanID))
	if s.ParentID != 0 {
		span.SetParentSpanID(spanID(s.ParentID))
	}
	duration := max(s.Duration, 0) // the agent's normalizer turns negative durations into 0
	span.SetStartTimestamp(pcommon.Timestamp(s.Start))
	span.SetEndTimestamp(pcommon.Timestamp(s.Start + duration))
}

func spanKind(kind, spanType string) ptrace.SpanKind {
	switch strings.ToLower(kind) {
	case "server":
		return ptrace.SpanKindServer
	case "client":
		return ptrace.SpanKindClient
	case "producer":
		return ptrace.SpanKindProducer
	case "consumer":
		return ptrace.SpanKindConsumer
	case "internal":
		return ptrace.SpanKindInternal
	}
	switch spanType {
	case "web":
		return ptrace.SpanKindServer
	case "http":
		return ptrace.SpanKindClient
	}
	return ptrace.SpanKindUnspecified
}

// setStatus maps error to the status; the error tags become the status message and an exception
// event (Elastic APM turns exception events into error documents). The tags stay as attributes.
func (t *Translator) setStatus(span ptrace.Span, s *payload.Span) {
	if s.Error <= 0 {
		if t.opts.StatusOKWithoutError {
			span.Status().SetCode(ptrace.StatusCodeOk)
		}
		return
	}
	span.Status().SetCode(ptrace.StatusCodeError)
	msg, hasMsg := s.MetaValue("error.message")
	if !hasMsg {
		msg, hasMsg = s.MetaValue("error.msg")
	}
	typ, hasType := s.MetaValue("error.type")
	stack, hasStack := s.MetaValue("error.stack")
	if !hasStack {
		stack, hasStack = s.MetaValue("error.stacktrace")
	}
	if !hasStack {
		// dd-trace-go v2 sends where the error was handled when the error carries no stack.
		stack, hasStack = s.MetaValue("error.handling_stack")
	}
	span.Status().SetMessage(msg)
	if !hasMsg && !hasType && !hasStack {
		return
	}
	if v, _ := s.MetaValue("_dd.span_events.has_exception"); v == "true" {
		return // the tracer sent its own exception event
	}
	ev := span.Events().AppendEmpty()
	ev.SetName(semconv.ExceptionEventName)
	ev.SetTimestamp(span.EndTimestamp())
	if hasType {
		ev.Attributes().PutStr(string(semconv.ExceptionTypeKey), typ)
	}
	if hasMsg {
		ev.Attributes().PutStr(string(semconv.ExceptionMessageKey), msg)
	}
	if hasStack {
		ev.Attributes().PutStr(string(semconv.ExceptionStacktraceKey), stack)
	}
}

// decimalIDs writes the decimal span and trace ids of a request's spans into one buffer, sized
// for all of them: the datadog.span.id and datadog.trace.id attributes would otherwise cost two
// allocations per span. The ids are substrings of what the builder has written, which stays
// valid as the builder appends.
type decimalIDs struct {
	buf     strings.Builder
	scratch [20]byte // one uint64 in decimal
}

// reserve makes room for the ids of n spans.
func (d *decimalIDs) reserve(n int) {
	d.buf.Grow(n * 2 * len(d.scratch))
}

// of returns the span's decimal span id and trace id.
func (d *decimalIDs) of(s *payload.Span) (spanDec, traceDec string) {
	start := d.buf.Len()
	d.buf.Write(strconv.AppendUint(d.scratch[:0], s.SpanID, 10))
	mid := d.buf.Len()
	d.buf.Write(strconv.AppendUint(d.scratch[:0], s.TraceID, 10))
	all := d.buf.String()
	return all[start:mid], all[mid:]
}
