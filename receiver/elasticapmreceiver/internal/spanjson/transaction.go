// A transaction line: what it may hold, how apm-data would validate it, the event it becomes
// (mapToTransactionModel's fields, in the same cases).

package spanjson

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/elastic/apm-data/model/modelpb"
)

// transaction holds what a line said, before the event is built.
type transaction struct {
	id, traceID, parentID, name, typ, result, outcome optStr
	timestamp                                         uint64
	duration, sampleRate                              float64
	hasTimestamp, hasDuration, hasRate                bool
	sampled                                           *bool
	started, dropped                                  *uint32
	request                                           request
	response                                          response
	tags                                              []Tag
}

// request is the incoming HTTP request (context.request).
type request struct {
	method, httpVersion, remoteAddress               optStr
	raw, protocol, full, hostname, path, query, hash optStr
	port                                             *uint32
	headers                                          headers
}

// response is the answer to it (context.response).
type response struct {
	statusCode                 *uint32
	finished, headersSent      *bool
	transfer, encoded, decoded *uint64
	headers                    headers
}

// headers are HTTP headers under their canonical names, as apm-data keeps them.
type headers struct {
	list []*modelpb.HTTPHeader
	set  bool
}

func (tx *transaction) read(s *scanner) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return readStr(s, &tx.id)
		case "trace_id":
			return readStr(s, &tx.traceID)
		case "parent_id":
			return readStr(s, &tx.parentID)
		case "name":
			return readStr(s, &tx.name)
		case "type":
			return readStr(s, &tx.typ)
		case "result":
			return readStr(s, &tx.result)
		case "outcome":
			return readStr(s, &tx.outcome)
		case "timestamp":
			tx.timestamp, tx.hasTimestamp = s.uint(maxTimestampMicros)
			return tx.hasTimestamp
		case "duration":
			return readDecimal(s, &tx.duration, &tx.hasDuration)
		case "sample_rate":
			return readDecimal(s, &tx.sampleRate, &tx.hasRate)
		case "sampled":
			return readBool(s, &tx.sampled)
		case "span_count":
			return tx.readSpanCount(s)
		case "context":
			return tx.readContext(s)
		case "dropped_spans_stats", "links":
			return s.emptyArray()
		}
		return false
	})
}

func (tx *transaction) readSpanCount(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "started":
			return readUint32(s, &tx.started)
		case "dropped":
			return readUint32(s, &tx.dropped)
		}
		return false
	})
}

func (tx *transaction) readContext(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "request":
			return tx.request.read(s)
		case "response":
			return tx.response.read(s)
		case "tags":
			return readTags(s, &tx.tags)
		case "service", "message", "user", "custom", "cloud", "page":
			return s.emptyObject() // their contents are apm-data's to read
		}
		return false
	})
}

func (r *request) read(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "method":
			return readStr(s, &r.method)
		case "http_version":
			return readStr(s, &r.httpVersion)
		case "url":
			return r.readURL(s)
		case "headers":
			return r.headers.read(s)
		case "socket":
			return readObject(s, func(key []byte) bool {
				return string(key) == "remote_address" && readStr(s, &r.remoteAddress)
			})
		case "cookies", "env":
			return s.emptyObject()
		}
		return false
	})
}

func (r *request) readURL(s *scanner) bool {
	return readObject(s, func(key []byte) bool {
		switch string(key) {
		case "raw":
			return readStr(s, &r.raw)
		case "protocol":
			return readStr(s, &r.protocol)
		case "full":
			return readStr(s, &r.full)
		case "hostname":
			return readStr(s, &r.hostname)
		case "pathname":
			return readStr(s, &r.path)
		case "search":
			return readStr(s, &r.query)
		case "hash":
			return readStr(s, &r.hash)
		case "port":
			return r.readPort(s)
		}
		return false
	})
}

// readPort reads a port given as a number or as a string of digits.
func (r *request) readPort(s *scanner) bool {
	var port uint64
	ok := false
	switch s.peek() {
	case 'n':
		return s.null()
	case '"':
		var text string
		// A string of digits; a long one (leading zeros) is left to apm-data's length rule.
		if text, ok = s.str(); ok && text != "" && len(text) <= 10 && strings.Trim(text, "0123456789") == "" {
			port, ok = parsePort(text)
		} else {
			ok = false
		}
	default:
		port, ok = s.uint(65535)
	}
	p := uint32(port)
	r.port = &p
	return ok && port <= 65535
}

func parsePort(text string) (uint64, bool) {
	v, err := strconv.ParseUint(text, 10, 64)
	return v, err == nil
}

func (r *response) read(s *scanner) bool {
	return readObject(s, func(key []byte) bool {
		switch string(key) {
		case "status_code":
			return readUint32(s, &r.statusCode)
		case "finished":
			return readBool(s, &r.finished)
		case "headers_sent":
			return readBool(s, &r.headersSent)
		case "transfer_size":
			return readUint64(s, &r.transfer)
		case "encoded_body_size":
			return readUint64(s, &r.encoded)
		case "decoded_body_size":
			return readUint64(s, &r.decoded)
		case "headers":
			return r.headers.read(s)
		}
		return false
	})
}

// readObject reads an object with member, or null.
func readObject(s *scanner, member func(key []byte) bool) bool {
	if s.null() {
		return true
	}
	return s.object(member)
}

// read reads headers: each a string or a list of strings. Two names with one canonical form, and
// the headers apm-data takes a client address from, are declined; null leaves them as they were.
func (h *headers) read(s *scanner) bool {
	if s.null() {
		return true
	}
	*h = headers{set: true} // a second "headers" replaces the first, as in apm-data
	return s.object(func(key []byte) bool {
		name := http.CanonicalHeaderKey(view(key))
		switch name {
		case "Forwarded", "X-Real-Ip", "X-Forwarded-For":
			return false
		}
		if len(h.list) == maxNames {
			return false
		}
		for _, have := range h.list {
			if have.Key == name {
				return false
			}
		}
		values, ok := readStrings(s)
		if ok && len(values) > 0 {
			h.list = append(h.list, &modelpb.HTTPHeader{Key: name, Value: values})
		}
		return ok
	})
}

// readStrings reads a string or a list of strings.
func readStrings(s *scanner) ([]string, bool) {
	if s.peek() == '"' {
		v, ok := s.str()
		return []string{v}, ok
	}
	if !s.eat('[') {
		return nil, false
	}
	var values []string
	if s.eat(']') {
		return nil, true
	}
	for {
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		values = append(values, v)
		if s.eat(']') {
			return values, true
		}
		if !s.eat(',') {
			return nil, false
		}
	}
}

func (r *request) isSet() bool {
	return r.method.set || r.httpVersion.set || r.remoteAddress.set || r.urlSet() || r.headers.set
}

func (r *request) urlSet() bool {
	return r.raw.set || r.protocol.set || r.full.set || r.hostname.set || r.path.set || r.query.set ||
		r.hash.set || r.port != nil
}

func (r *response) isSet() bool {
	return r.statusCode != nil || r.finished != nil || r.headersSent != nil || r.transfer != nil ||
		r.encoded != nil || r.decoded != nil || r.headers.set
}

// valid applies apm-data's validation of the fields read.
func (tx *transaction) valid() bool {
	if !tx.id.set || !tx.traceID.set || !tx.typ.set || !tx.hasTimestamp || !tx.hasDuration ||
		tx.duration < 0 || tx.started == nil || !validOutcome(tx.outcome) {
		return false
	}
	if tx.request.isSet() && !tx.request.method.set {
		return false
	}
	r := &tx.request
	return !tooLong(tx.id, tx.traceID, tx.parentID, tx.name, tx.typ, tx.result, r.method, r.httpVersion,
		r.raw, r.protocol, r.full, r.hostname, r.path, r.query, r.hash)
}

// transactionEvent is the messages every transaction event has, allocated at once.
type transactionEvent struct {
	event  modelpb.APMEvent
	tx     modelpb.Transaction
	span   modelpb.Span
	fields modelpb.Event
	trace  modelpb.Trace
	count  modelpb.SpanCount
}

// event builds the transaction's event; Attach completes it with the request's metadata.
func (tx *transaction) event() *modelpb.APMEvent {
	all := &transactionEvent{}
	e := &all.event
	e.Transaction, e.Span, e.Event, e.Trace = &all.tx, &all.span, &all.fields, &all.trace
	t := e.Transaction
	t.Id, t.Name, t.Result, t.Type, t.Sampled, t.RepresentativeCount = tx.id.v, tx.name.v, tx.result.v, tx.typ.v, true, 1
	if t.Type == "" {
		t.Type = "unknown"
	}
	if tx.sampled != nil {
		t.Sampled = *tx.sampled
	}
	if tx.hasRate {
		t.RepresentativeCount = representativeCount(tx.sampleRate)
	}
	t.SpanCount = &all.count
	t.SpanCount.Started, t.SpanCount.Dropped = tx.started, tx.dropped
	e.Span.Id = tx.id.v
	e.Event.Duration = durationNanos(tx.duration)
	e.Event.Outcome = outcomeOf(tx.outcome, tx.response.statusCode, 500) // a transaction failed on a 5xx
	e.ParentId = tx.parentID.v
	e.Timestamp = tx.timestamp * 1000
	e.Trace.Id = tx.traceID.v
	tx.request.setOn(e)
	tx.response.setOn(e)
	return e
}

// setOn writes the request: method, version, headers, URL, the user agent (from the headers) and
// the client (from the socket).
func (r *request) setOn(e *modelpb.APMEvent) {
	if agent := r.headers.values("User-Agent"); len(agent) > 0 {
		e.UserAgent = &modelpb.UserAgent{Original: strings.Join(agent, ", ")}
	}
	if ip, port := splitAddrPort(r.remoteAddress.v); ip.IsValid() {
		e.Source = &modelpb.Source{Ip: modelpb.Addr2IP(ip), Port: uint32(port)}
		e.Client = &modelpb.Client{Ip: modelpb.Addr2IP(ip)}
	}
	if r.isSet() {
		e.Http = &modelpb.HTTP{Version: r.httpVersion.v, Request: &modelpb.HTTPRequest{Method: r.method.v}}
		if len(r.headers.list) > 0 {
			e.Http.Request.Headers = r.headers.list
		}
	}
	if r.urlSet() {
		e.Url = &modelpb.URL{
			Original: r.raw.v, Full: r.full.v, Domain: r.hostname.v, Path: r.path.v, Query: r.query.v,
			Fragment: r.hash.v, Scheme: strings.TrimSuffix(r.protocol.v, ":"),
		}
		if r.port != nil {
			e.Url.Port = *r.port
		}
	}
}

func (r *response) setOn(e *modelpb.APMEvent) {
	if !r.isSet() {
		return
	}
	if e.Http == nil {
		e.Http = &modelpb.HTTP{}
	}
	e.Http.Response = &modelpb.HTTPResponse{
		Finished: r.finished, HeadersSent: r.headersSent, TransferSize: r.transfer,
		EncodedBodySize: r.encoded, DecodedBodySize: r.decoded,
	}
	if r.statusCode != nil {
		e.Http.Response.StatusCode = *r.statusCode
	}
	if len(r.headers.list) > 0 {
		e.Http.Response.Headers = r.headers.list
	}
}

func (h *headers) values(name string) []string {
	for _, kv := range h.list {
		if kv.Key == name {
			return kv.Value
		}
	}
	return nil
}

// splitAddrPort reads a socket's remote address as apm-data does: "[ip]:port", or "ip:port" when
// it has both a dot and a colon (IPv4), else an address alone.
func splitAddrPort(in string) (netip.Addr, uint16) {
	if in == "" {
		return netip.Addr{}, 0
	}
	if in[0] == '[' || strings.Contains(in, ".") && strings.Contains(in, ":") {
		ap, err := netip.ParseAddrPort(in)
		if err != nil {
			return netip.Addr{}, 0
		}
		return ap.Addr(), ap.Port()
	}
	ip, err := netip.ParseAddr(in)
	if err != nil {
		return netip.Addr{}, 0
	}
	return ip, 0
}
