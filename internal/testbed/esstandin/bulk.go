package esstandin

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// bulkMeta is the metadata object of a bulk action line. Unknown keys make Elasticsearch reject the
// whole request, and so does the stand-in.
type bulkMeta struct {
	Index             string          `json:"_index"`
	ID                string          `json:"_id"`
	Routing           string          `json:"routing"`
	Pipeline          string          `json:"pipeline"`
	RequireAlias      *bool           `json:"require_alias"`
	RequireDataStream *bool           `json:"require_data_stream"`
	DynamicTemplates  json.RawMessage `json:"dynamic_templates"`
	IfSeqNo           *int64          `json:"if_seq_no"`
	IfPrimaryTerm     *int64          `json:"if_primary_term"`
	Version           *int64          `json:"version"`
	VersionType       string          `json:"version_type"`
	OpType            string          `json:"op_type"`
}

// requestError is an error Elasticsearch returns for a whole request.
type requestError struct {
	status int
	kind   string
	reason string
}

func (e *requestError) Error() string { return e.kind + ": " + e.reason }

func (e *requestError) body() map[string]any {
	cause := map[string]any{"type": e.kind, "reason": e.reason}
	return map[string]any{
		"error":  map[string]any{"root_cause": []any{cause}, "type": e.kind, "reason": e.reason},
		"status": e.status,
	}
}

// itemError is a per-item failure inside a 200 bulk response.
type itemError struct {
	status int
	kind   string
	reason string
}

// bulkItem is one parsed action with its document.
type bulkItem struct {
	action string
	meta   bulkMeta
	source []byte
}

// parseBulk splits an NDJSON bulk body into items, failing the whole request where Elasticsearch
// does: malformed action lines, unknown actions or parameters, a missing final newline.
func parseBulk(body []byte, defaultIndex string) ([]bulkItem, *requestError) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &requestError{http.StatusBadRequest, "action_request_validation_exception", "Validation Failed: 1: no requests added;"}
	}
	if body[len(body)-1] != '\n' {
		return nil, &requestError{http.StatusBadRequest, "illegal_argument_exception", "The bulk request must be terminated by a newline [\\n]"}
	}
	var items []bulkItem
	line := 0
	// Elasticsearch skips blank lines where it expects an action, but takes the line after an
	// action as its source whatever it holds: a blank one is an empty (unparsable) document.
	nextLine := func() ([]byte, bool) {
		if len(body) == 0 {
			return nil, false
		}
		i := bytes.IndexByte(body, '\n')
		l := body[:i]
		body = body[i+1:]
		line++
		return l, true
	}
	nextAction := func() ([]byte, bool) {
		for {
			l, ok := nextLine()
			if !ok || len(bytes.TrimSpace(l)) > 0 {
				return l, ok
			}
		}
	}
	// An exporter names the same index on every action line of a bulk: each distinct line is
	// parsed once per request (the parse decides on the line's bytes alone), which in make bench,
	// where the stand-in shares a core with the load generator, was 45 % of its cost (BenchmarkBulk).
	parsed := map[string]bulkItem{}
	const maxParsed = 256 // distinct lines remembered per request
	for {
		actionLine, ok := nextAction()
		if !ok {
			break
		}
		// With document ids every line differs, but only in its id: the line without it is
		// parsed once, the id set after.
		key, id, hasID := withoutID(actionLine)
		it, known := parsed[string(key)]
		if !known {
			var rerr *requestError
			if it, rerr = parseAction(key, line, defaultIndex); rerr != nil {
				return nil, rerr
			}
			if len(parsed) < maxParsed {
				parsed[string(key)] = it
			}
		}
		if hasID {
			it.meta.ID = id
		}
		if it.action != "delete" {
			src, ok := nextLine()
			if !ok {
				return nil, &requestError{
					http.StatusBadRequest, "action_request_validation_exception",
					fmt.Sprintf("Validation Failed: 1: source is missing for the action on line [%d];", line),
				}
			}
			it.source = src
		}
		items = append(items, it)
	}
	return items, nil
}

// withoutID returns an action line without its _id member, and the id, when the member is the
// action's first (`{"create":{"_id":"<id>",…`: how the exporter's go-docappender writes it) or its
// last (`…,"_id":"<id>"}}`), the id needs no unescaping and the line names no other _id
// (Elasticsearch refuses a duplicate key, and parseAction must see it); otherwise the line itself.
func withoutID(line []byte) (rest []byte, id string, ok bool) {
	const member = `"_id":"`
	i := bytes.Index(line, []byte(member))
	if i < 0 {
		return line, "", false
	}
	start := i + len(member)
	n := bytes.IndexByte(line[start:], '"')
	if n < 0 || bytes.IndexByte(line[start:start+n], '\\') >= 0 || bytes.Contains(line[start+n:], []byte(`"_id"`)) {
		return line, "", false
	}
	after := start + n + 1 // past the id's closing quote
	switch {
	case isActionOpening(line[:i]) && bytes.HasPrefix(line[after:], []byte(`,"`)):
		rest = append(append(make([]byte, 0, len(line)), line[:i]...), line[after+1:]...)
	case isActionOpening(line[:i]) && string(line[after:]) == "}}": // the only member
		rest = append(append(make([]byte, 0, i+2), line[:i]...), '}', '}')
	case i > 0 && line[i-1] == ',' && string(line[after:]) == "}}":
		rest = append(append(make([]byte, 0, i+1), line[:i-1]...), '}', '}')
	default:
		return line, "", false
	}
	return rest, string(line[start : start+n]), true
}

// isActionOpening reports whether b is `{"<action>":{`, an action line up to its first member.
func isActionOpening(b []byte) bool {
	if !bytes.HasPrefix(b, []byte(`{"`)) || !bytes.HasSuffix(b, []byte(`":{`)) || len(b) < 6 {
		return false
	}
	return !bytes.ContainsAny(b[2:len(b)-3], `"\{}:,`)
}

// parseAction parses the action line at line number line.
func parseAction(actionLine []byte, line int, defaultIndex string) (bulkItem, *requestError) {
	var action map[string]json.RawMessage
	if err := json.Unmarshal(actionLine, &action); err != nil {
		return bulkItem{}, &requestError{
			http.StatusBadRequest, "x_content_parse_exception",
			fmt.Sprintf("Malformed action/metadata line [%d], expected START_OBJECT: %v", line, err),
		}
	}
	if key := duplicateKey(actionLine); key != "" {
		return bulkItem{}, &requestError{
			http.StatusBadRequest, "x_content_parse_exception",
			fmt.Sprintf("[%d:1] Duplicate field '%s'", line, key),
		}
	}
	if len(action) != 1 {
		return bulkItem{}, &requestError{
			http.StatusBadRequest, "illegal_argument_exception",
			fmt.Sprintf("Malformed action/metadata line [%d], expected a single action but found [%d]", line, len(action)),
		}
	}
	var it bulkItem
	var rawMeta json.RawMessage
	for k, v := range action {
		it.action, rawMeta = k, v
	}
	switch it.action {
	case "create", "index", "update", "delete":
	default:
		return bulkItem{}, &requestError{
			http.StatusBadRequest, "illegal_argument_exception",
			fmt.Sprintf("Malformed action/metadata line [%d], expected field [create], [delete], [index] or [update] but found [%s]", line, it.action),
		}
	}
	dec := json.NewDecoder(bytes.NewReader(rawMeta))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&it.meta); err != nil {
		return bulkItem{}, &requestError{
			http.StatusBadRequest, "illegal_argument_exception",
			fmt.Sprintf("Action/metadata line [%d] is invalid: %v", line, err),
		}
	}
	// op_type on an index action (case-insensitive) may make it a create, reported under
	// "create" (legal on a data stream), as in Elasticsearch; other actions ignore it.
	if it.action == "index" {
		switch strings.ToLower(it.meta.OpType) {
		case "", "index":
		case "create":
			it.action = "create"
		default:
			return bulkItem{}, &requestError{
				http.StatusBadRequest, "illegal_argument_exception",
				fmt.Sprintf("opType must be 'create' or 'index', found: [%s]", it.meta.OpType),
			}
		}
	}
	if it.meta.Index == "" {
		it.meta.Index = defaultIndex
	}
	if it.meta.Index == "" {
		return bulkItem{}, &requestError{http.StatusBadRequest, "action_request_validation_exception", "Validation Failed: 1: index is missing;"}
	}
	return it, nil
}

// handleBulk serves POST|PUT /_bulk and /{index}/_bulk.
func (s *Server) handleBulk(w http.ResponseWriter, r *http.Request, defaultIndex string) {
	start := time.Now()
	faults := s.Faults()
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf) // nothing keeps the body's bytes: a kept document copies its source
	body, rerr := readBody(r, s.opts.MaxContentLength, buf)
	if rerr == nil {
		rerr = s.injectRequestFaults(r, faults)
	}
	if rerr != nil {
		s.store.countRequest(int64(len(body)), true, nil)
		writeJSON(w, rerr.status, rerr.body())
		return
	}
	if rerr = s.checkBulkParams(r); rerr != nil {
		s.store.countRequest(int64(len(body)), true, nil)
		writeJSON(w, rerr.status, rerr.body())
		return
	}
	items, rerr := parseBulk(body, defaultIndex)
	if rerr != nil {
		s.store.countRequest(int64(len(body)), true, nil)
		writeJSON(w, rerr.status, rerr.body())
		return
	}
	query := r.URL.Query() // parsed once: it was, per item, a seventh of the stand-in's cost
	_, requireDS := query["require_data_stream"]
	requireDS = requireDS && query.Get("require_data_stream") != "false"
	for i := range items { // the request's pipeline is every item's default
		if items[i].meta.Pipeline == "" {
			items[i].meta.Pipeline = query.Get("pipeline")
		}
	}

	results := make([]itemResult, 0, len(items))
	accepted := make([]Document, 0, len(items))
	rejected := map[string]int{}
	anyError := false
	for _, it := range items {
		doc, name, ierr := s.indexItem(it, requireDS, faults)
		if ierr != nil {
			anyError = true
			rejected[ierr.kind]++
			results = append(results, itemResult{action: it.action, index: name, id: it.meta.ID, err: ierr})
			continue
		}
		accepted = append(accepted, doc)
		results = append(results, itemResult{action: it.action, index: name, id: doc.ID, version: doc.version, seqNo: s.seqNo.Add(1) - 1})
	}
	if err := s.store.add(accepted); err != nil {
		s.store.countRequest(int64(len(body)), true, nil)
		writeJSON(w, http.StatusInternalServerError, (&requestError{http.StatusInternalServerError, "exception", err.Error()}).body())
		return
	}
	s.store.countRequest(int64(len(body)), false, rejected)
	if fn := s.onSpan.Load(); fn != nil {
		for _, d := range accepted {
			if isSpanIndex(d.Index) && d.version <= 1 {
				(*fn)(d.traceID)
			}
		}
	}
	if faults.ReplyLostFraction > 0 && rand.Float64() < faults.ReplyLostFraction {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				resetConn(c)
				return
			}
		}
	}
	resp := appendBulkResponse(nil, time.Since(start).Milliseconds(), anyError, results, newSelector(query.Get("filter_path")))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(resp)
}

// bulkParams are the query parameters Elasticsearch's bulk API knows, with the version that
// added each (0, 0: every version the stand-in claims). Elasticsearch refuses a whole request with
// a parameter it does not know, so a client that sends a newer one (require_data_stream before
// 8.12, include_source_on_error before 8.18) fails here as it would there.
var bulkParams = map[string][2]int{
	"pipeline": {}, "refresh": {}, "routing": {}, "timeout": {}, "wait_for_active_shards": {},
	"require_alias": {}, "_source": {}, "_source_excludes": {}, "_source_includes": {},
	"filter_path": {}, "error_trace": {}, "human": {}, "pretty": {},
	"require_data_stream":     {8, 12},
	"include_source_on_error": {8, 18},
}

func (s *Server) checkBulkParams(r *http.Request) *requestError {
	for name, values := range r.URL.Query() {
		since, known := bulkParams[name]
		if !known || !s.atLeast(since[0], since[1]) {
			return &requestError{
				http.StatusBadRequest, "illegal_argument_exception",
				"request [" + r.URL.Path + "] contains unrecognized parameter: [" + name + "]",
			}
		}
		if name == "require_data_stream" || name == "require_alias" || name == "include_source_on_error" {
			// Booleans: empty means true; anything but true or false is refused.
			for _, v := range values {
				if v != "" && v != "true" && v != "false" {
					return &requestError{
						http.StatusBadRequest, "illegal_argument_exception",
						"Failed to parse value [" + v + "] as only [true] or [false] are allowed.",
					}
				}
			}
		}
	}
	return nil
}

// injectRequestFaults sleeps for the configured latency and fails whole requests as configured.
func (s *Server) injectRequestFaults(r *http.Request, f Faults) *requestError {
	if d := time.Duration(f.Latency); d > 0 || f.LatencyJitter > 0 {
		if f.LatencyJitter > 0 {
			d += rand.N(time.Duration(f.LatencyJitter))
		}
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
	}
	if f.RequestUnavailableFraction > 0 && rand.Float64() < f.RequestUnavailableFraction {
		return &requestError{
			http.StatusServiceUnavailable, "unavailable_shards_exception",
			"[es-standin] injected fault: primary shard is not active",
		}
	}
	return nil
}

// indexItem validates and stores one item the way Elasticsearch would, returning the document, the
// index name to report, or a per-item error.
func (s *Server) indexItem(it bulkItem, requireDS bool, f Faults) (Document, string, *itemError) {
	name := it.meta.Index
	if it.meta.RequireDataStream != nil {
		requireDS = *it.meta.RequireDataStream
	}
	if it.action == "update" || it.action == "delete" {
		return Document{}, name, &itemError{
			http.StatusBadRequest, "illegal_argument_exception",
			"[es-standin] the [" + it.action + "] action is not implemented by the stand-in",
		}
	}
	if p := it.meta.Pipeline; p != "" && p != "_none" {
		// The stand-in has no ingest pipelines: Elasticsearch refuses an item naming one that
		// does not exist, rather than indexing it unprocessed.
		return Document{}, name, &itemError{
			http.StatusBadRequest, "illegal_argument_exception",
			"pipeline with id [" + p + "] does not exist",
		}
	}
	if reason := invalidIndexName(name); reason != "" {
		return Document{}, name, &itemError{
			http.StatusBadRequest, "invalid_index_name_exception",
			"Invalid index name [" + name + "], " + reason,
		}
	}
	if f.ItemTooManyRequestsFraction > 0 && rand.Float64() < f.ItemTooManyRequestsFraction {
		return Document{}, name, &itemError{
			http.StatusTooManyRequests, "es_rejected_execution_exception",
			"[es-standin] injected fault: rejected execution of coordinating operation",
		}
	}
	tgt, ok := s.catalog.resolve(name, requireDS)
	if !ok {
		return Document{}, name, &itemError{
			http.StatusNotFound, "index_not_found_exception",
			"no such index [" + name + "] and [require_data_stream] request flag is [true] and [" + name + "] is not a data stream",
		}
	}
	if tgt.dataStream && it.action != "create" {
		return Document{}, tgt.backingIndex, &itemError{
			http.StatusBadRequest, "illegal_argument_exception",
			"only write ops with an op_type of create are allowed in data streams",
		}
	}
	if s.opts.CountOnly {
		return s.countOnlyItem(it, name, tgt)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(it.source, &fields); err != nil {
		return Document{}, tgt.backingIndex, &itemError{
			http.StatusBadRequest, s.parsingException(),
			"[1:1] failed to parse: " + err.Error(),
		}
	}
	if key := duplicateKey(it.source); key != "" {
		// Elasticsearch parses JSON with strict duplicate detection, at every depth.
		return Document{}, tgt.backingIndex, &itemError{
			http.StatusBadRequest, s.parsingException(),
			"[1:1] failed to parse: Duplicate field '" + key + "'",
		}
	}
	_, hasTimestamp := fields["@timestamp"]
	if tgt.timeSeries {
		if it.meta.ID != "" {
			return Document{}, tgt.backingIndex, &itemError{
				http.StatusBadRequest, "illegal_argument_exception",
				"_id must be unset or set to [" + timeSeriesID(fields) + "] but was [" + it.meta.ID + "] because [" + tgt.backingIndex + "] is in time_series mode",
			}
		}
		it.meta.ID = timeSeriesID(fields)
	}
	id, version, ierr := s.documentID(it, name, tgt, hasTimestamp)
	if ierr != nil {
		return Document{}, tgt.backingIndex, ierr
	}
	src := make([]byte, len(it.source))
	copy(src, it.source)
	doc := Document{
		Index: name, ID: id, Source: src, SpanID: spanIDOf(fields), service: serviceOf(fields), version: version, sourceBytes: len(src),
		traceID: s.traceIDFor(name, src),
	}
	if doc.SpanID != "" {
		// Span events (otel mode: one log document per event) share their span's id, so the event
		// name and timestamp are part of what makes a document a duplicate.
		doc.dedupKey = name + "/" + doc.SpanID + "/" + string(fields["event_name"]) + "/" + string(fields["@timestamp"])
	}
	return doc, tgt.backingIndex, nil
}

// countOnlyItem is indexItem's end for Options.CountOnly: no parsing, no copy of the source.
func (s *Server) countOnlyItem(it bulkItem, name string, tgt target) (Document, string, *itemError) {
	id, version, ierr := s.documentID(it, name, tgt, bytes.Contains(it.source, []byte(`"@timestamp"`)))
	if ierr != nil {
		return Document{}, tgt.backingIndex, ierr
	}
	return Document{Index: name, ID: id, service: scanService(it.source), version: version, sourceBytes: len(it.source), traceID: s.traceIDFor(name, it.source)}, tgt.backingIndex, nil
}

// traceIDFor is the trace id of a span document for OnSpan's function, "" when there is none.
func (s *Server) traceIDFor(index string, src []byte) string {
	if s.onSpan.Load() == nil || !isSpanIndex(index) {
		return ""
	}
	return scanTraceID(src)
}

// documentID applies the data stream's @timestamp rule and returns the document's id and
// version: the id the client gave or a new one. With a given id, create conflicts with an existing
// document, and index overwrites it (the next version), as in Elasticsearch.
func (s *Server) documentID(it bulkItem, name string, tgt target, hasTimestamp bool) (string, int64, *itemError) {
	if tgt.dataStream && !hasTimestamp {
		return "", 0, &itemError{http.StatusBadRequest, s.parsingException(), "data stream timestamp field [@timestamp] is missing"}
	}
	id := it.meta.ID
	if id == "" {
		return "sd" + strconv.FormatInt(s.idSeq.Add(1), 36), 1, nil
	}
	version, ok := s.nextVersion(name, id, it.action == "create")
	if !ok {
		return "", 0, &itemError{
			http.StatusConflict, "version_conflict_engine_exception",
			"[" + id + "]: version conflict, document already exists (current version [" + strconv.FormatInt(version, 10) + "])",
		}
	}
	return id, version, nil
}

// timeSeriesID stands for the _id a time-series data stream derives from a document's dimensions
// and @timestamp: here everything but the metric values and the fields Elasticsearch's otel
// metrics mappings do not make dimensions (_doc_count, a metadata field; start_timestamp, a
// date_nanos), so two documents conflict exactly when they group the same metrics under the same
// resource, scope, attributes and timestamp, whatever their values and counts.
func timeSeriesID(fields map[string]json.RawMessage) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "metrics" && k != "_doc_count" && k != "start_timestamp" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s=%d:", len(k), k, len(fields[k]))
		h.Write(fields[k])
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:15])
}

// parsingException is the error type of a document that cannot be parsed or mapped:
// document_parsing_exception from Elasticsearch 8.8, mapper_parsing_exception before.
func (s *Server) parsingException() string {
	if s.atLeast(8, 8) {
		return "document_parsing_exception"
	}
	return "mapper_parsing_exception"
}

// duplicateKey returns the first key that appears twice in one JSON object of b, at any depth, or
// "" (also for invalid JSON: that fails elsewhere).
func duplicateKey(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		object  bool
		keys    map[string]bool
		wantKey bool // in an object, the next string token is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := len(stack) - 1
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top >= 0 && stack[top].object {
					stack[top].wantKey = true // this value ends; the next token is a key
				}
				stack = append(stack, frame{object: v == '{', keys: map[string]bool{}, wantKey: v == '{'})
			default:
				stack = stack[:top]
			}
			continue
		case string:
			if top >= 0 && stack[top].object && stack[top].wantKey {
				if stack[top].keys[v] {
					return v
				}
				stack[top].keys[v] = true
				stack[top].wantKey = false
				continue
			}
		}
		if top >= 0 && stack[top].object {
			stack[top].wantKey = true // a value ended
		}
	}
}

// scanService finds the value of the first "service.name" key (otel and raw shapes) or, failing
// that, of "service":{"name" (ECS) by a byte search, without unescaping.
func scanService(src []byte) string {
	for _, key := range [][]byte{[]byte(`"service.name":"`), []byte(`"service":{"name":"`)} {
		_, after, ok := bytes.Cut(src, key)
		if !ok {
			continue
		}
		v := after
		if before, _, ok := bytes.Cut(v, []byte{'"'}); ok {
			return string(before)
		}
	}
	return ""
}

// scanTraceID finds the value of the first "trace_id" key (otel shape) or, failing that, of
// "trace":{"id" (ECS) by a byte search, as scanService finds the service.
func scanTraceID(src []byte) string {
	for _, key := range [][]byte{[]byte(`"trace_id":"`), []byte(`"trace":{"id":"`)} {
		if _, after, ok := bytes.Cut(src, key); ok {
			if id, _, ok := bytes.Cut(after, []byte{'"'}); ok {
				return string(id)
			}
		}
	}
	return ""
}

// nextVersion records a write of an explicit document id and returns the document's new version
// (1: created). With create set, an existing document is a conflict: ok false, with its version.
func (s *Server) nextVersion(index, id string, create bool) (version int64, ok bool) {
	var h maphash.Hash
	h.SetSeed(s.idSeed)
	_, _ = h.WriteString(index)
	_ = h.WriteByte('/')
	_, _ = h.WriteString(id)
	key := h.Sum64()
	s.idsMu.Lock()
	defer s.idsMu.Unlock()
	if v, exists := s.ids[key]; exists && create {
		return v, false
	}
	s.ids[key]++
	return s.ids[key], true
}

// invalidIndexName applies Elasticsearch's index name rules, returning why a name is invalid.
func invalidIndexName(name string) string {
	switch {
	case name != strings.ToLower(name):
		return "must be lowercase"
	case strings.HasPrefix(name, "_") || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "+"):
		return "must not start with '_', '-', or '+'"
	case strings.ContainsAny(name, `\/*?"<>| ,#:`):
		return `must not contain the following characters [ , ", *, \, <, |, ?, /, >, #, :]`
	case len(name) > 255:
		return "index name is too long"
	}
	return ""
}

// spanIDOf finds a span id in the exporter's otel ("span_id"), ECS ("span.id") or raw ("SpanId")
// document shapes.
func spanIDOf(fields map[string]json.RawMessage) string {
	var id string
	for _, k := range []string{"span_id", "SpanId", "span.id"} {
		if raw, ok := fields[k]; ok && json.Unmarshal(raw, &id) == nil && id != "" {
			return id
		}
	}
	if raw, ok := fields["span"]; ok {
		var span struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &span) == nil {
			return span.ID
		}
	}
	return ""
}

// serviceOf finds the service name in the otel (resource.attributes."service.name"), ECS
// (service.name) or raw (Resource."service.name") document shapes.
func serviceOf(fields map[string]json.RawMessage) string {
	var doc struct {
		Resource struct {
			Attributes struct {
				ServiceName string `json:"service.name"`
			} `json:"attributes"`
		} `json:"resource"`
		Service struct {
			Name string `json:"name"`
		} `json:"service"`
	}
	if raw, ok := fields["resource"]; ok && json.Unmarshal(raw, &doc.Resource) == nil && doc.Resource.Attributes.ServiceName != "" {
		return doc.Resource.Attributes.ServiceName
	}
	if raw, ok := fields["service"]; ok && json.Unmarshal(raw, &doc.Service) == nil && doc.Service.Name != "" {
		return doc.Service.Name
	}
	var raw struct {
		ServiceName string `json:"service.name"`
	}
	if r, ok := fields["Resource"]; ok && json.Unmarshal(r, &raw) == nil {
		return raw.ServiceName
	}
	if r, ok := fields["service.name"]; ok {
		var name string
		if json.Unmarshal(r, &name) == nil {
			return name
		}
	}
	return ""
}
