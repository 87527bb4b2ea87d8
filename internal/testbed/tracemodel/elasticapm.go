package tracemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The Elastic APM intake v2 body (APM Server's /intake/v2/events) as an Elastic APM agent sends it:
// NDJSON, a metadata line, then one transaction line per entry span and one span line for every
// other span. The field names and what is required are apm-data's (input/elasticapm,
// internal/modeldecoder/v2/model.go), the decoder APM Server and our receiver use.

// Agent names and versions as the Go agent (go.elastic.co/apm/v2) reports them; the OTLP payload
// carries telemetry.sdk.language=go, so the language matches.
const (
	APMAgentName    = "go"
	APMAgentVersion = "2.6.2"
	apmLanguage     = "go"
)

type apmLine struct {
	// Exactly one is set: the decoder reads a line's first key as its event type.
	Metadata    *apmMetadata    `json:"metadata,omitempty"`
	Transaction *apmTransaction `json:"transaction,omitempty"`
	Span        *apmSpan        `json:"span,omitempty"`
}

type apmMetadata struct {
	Service apmService `json:"service"`
	System  apmSystem  `json:"system"`
}

type apmService struct {
	Name        string   `json:"name"`
	Version     string   `json:"version,omitempty"`
	Environment string   `json:"environment,omitempty"`
	Agent       apmAgent `json:"agent"`
	Language    apmName  `json:"language"`
}

type apmAgent struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type apmName struct {
	Name string `json:"name"`
}

type apmSystem struct {
	DetectedHostname string `json:"detected_hostname,omitempty"`
}

type apmTransaction struct {
	ID        string         `json:"id"`
	TraceID   string         `json:"trace_id"`
	ParentID  string         `json:"parent_id,omitempty"`
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Result    string         `json:"result,omitempty"`
	Outcome   string         `json:"outcome"`
	Timestamp int64          `json:"timestamp"` // microseconds since the epoch
	Duration  apmDuration    `json:"duration"`
	SpanCount apmSpanCount   `json:"span_count"`
	Context   *apmTxnContext `json:"context,omitempty"`
}

type apmSpanCount struct {
	Started int `json:"started"`
	Dropped int `json:"dropped"`
}

type apmTxnContext struct {
	Request  *apmRequest    `json:"request,omitempty"`
	Response *apmResponse   `json:"response,omitempty"`
	Tags     map[string]any `json:"tags,omitempty"`
}

type apmRequest struct {
	Method  string            `json:"method"` // required once there is a request
	URL     *apmURL           `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

type apmURL struct {
	Path string `json:"pathname"`
}

type apmResponse struct {
	StatusCode int64 `json:"status_code"`
}

type apmSpan struct {
	ID            string          `json:"id"`
	TraceID       string          `json:"trace_id"`
	ParentID      string          `json:"parent_id"`
	TransactionID string          `json:"transaction_id,omitempty"`
	Name          string          `json:"name"`
	Type          string          `json:"type"`
	Subtype       string          `json:"subtype,omitempty"`
	Action        string          `json:"action,omitempty"`
	Outcome       string          `json:"outcome"`
	Timestamp     int64           `json:"timestamp"`
	Duration      apmDuration     `json:"duration"`
	Context       *apmSpanContext `json:"context,omitempty"`
}

type apmSpanContext struct {
	DB          *apmDB          `json:"db,omitempty"`
	HTTP        *apmSpanHTTP    `json:"http,omitempty"`
	Destination *apmDestination `json:"destination,omitempty"`
	Tags        map[string]any  `json:"tags,omitempty"`
}

type apmDB struct {
	Instance  string `json:"instance,omitempty"`
	Statement string `json:"statement,omitempty"`
	Type      string `json:"type"`
}

type apmSpanHTTP struct {
	Method   string       `json:"method,omitempty"`
	Response *apmResponse `json:"response,omitempty"`
}

type apmDestination struct {
	Address string `json:"address,omitempty"`
	Port    int64  `json:"port,omitempty"`
}

// apmDuration is a duration in whole microseconds, written as milliseconds with three decimals as
// agents write it: exact in decimal, where a float64 of milliseconds would not be.
type apmDuration int64

func (d apmDuration) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%d.%03d", d/1000, d%1000), nil
}

// apmResourceKeys are the span attributes that are the service's, not the span's: they travel once,
// in the metadata, as an agent sends them (and as ddKey does for Datadog's env and version).
var apmResourceKeys = map[string]string{"deployment.environment": "environment", "service.version": "version"}

// ElasticAPMEvents returns t as one intake v2 body.
func ElasticAPMEvents(t Trace) ([]byte, error) {
	meta := apmMetadataOf(t)
	lines := []apmLine{{Metadata: &meta}}
	txn := nearestTransactions(t.Spans)
	started := map[uint64]int{}
	for i, s := range t.Spans {
		if txn[i] != 0 && txn[i] != s.SpanID {
			started[txn[i]]++
		}
	}
	traceID := fmt.Sprintf("%016x%016x", t.TraceHi, t.TraceLo)
	for i, s := range t.Spans {
		if isEntrySpan(s) {
			lines = append(lines, apmLine{Transaction: apmTransactionOf(s, traceID, started[s.SpanID], meta.Service)})
		} else {
			lines = append(lines, apmLine{Span: apmSpanOf(s, traceID, txn[i], meta.Service)})
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // Encode ends every value with the newline NDJSON needs
	enc.SetEscapeHTML(false)     // as agents write it: "<", ">" and "&" as they are
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// apmMetadataOf is the metadata line: the service from the trace and its resource attributes.
func apmMetadataOf(t Trace) apmMetadata {
	m := apmMetadata{
		Service: apmService{
			Name:     apmServiceName(t.Service),
			Agent:    apmAgent{Name: APMAgentName, Version: APMAgentVersion},
			Language: apmName{Name: apmLanguage},
		},
		System: apmSystem{DetectedHostname: t.Host},
	}
	if len(t.Spans) > 0 {
		for _, a := range t.Spans[0].Attrs {
			switch apmResourceKeys[a.Key] {
			case "environment":
				m.Service.Environment = a.String()
			case "version":
				m.Service.Version = a.String()
			}
		}
	}
	return m
}

// apmServiceName replaces what the intake refuses in a service name (anything but letters, digits,
// spaces, _ and -) with _, as the agents do; an empty name would be refused too.
func apmServiceName(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ' ' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// isEntrySpan tells the spans an agent reports as transactions: where the service's work starts.
// The model has no consumer kind; a server span, or the root, is an entry.
func isEntrySpan(s Span) bool { return s.ParentID == 0 || s.Kind == KindServer }

// nearestTransactions gives each span the id of its nearest entry ancestor (an entry span its own),
// 0 when the chain leaves the payload before reaching one.
func nearestTransactions(spans []Span) []uint64 {
	byID := make(map[uint64]int, len(spans))
	for i, s := range spans {
		byID[s.SpanID] = i
	}
	out := make([]uint64, len(spans))
	for i := range spans {
		// Bounded by len(spans), so that a cycle of parents cannot loop.
		for j, hops := i, 0; hops <= len(spans); hops++ {
			if isEntrySpan(spans[j]) {
				out[i] = spans[j].SpanID
				break
			}
			p, ok := byID[spans[j].ParentID]
			if !ok {
				break
			}
			j = p
		}
	}
	return out
}

func apmTransactionOf(s Span, traceID string, started int, svc apmService) *apmTransaction {
	tx := &apmTransaction{
		ID: apmID(s.SpanID), TraceID: traceID, Name: s.Resource, Type: "request",
		Outcome: apmOutcome(s), Timestamp: s.Start.UnixMicro(), Duration: apmDuration(s.Duration.Microseconds()),
		SpanCount: apmSpanCount{Started: started},
	}
	if s.ParentID != 0 {
		tx.ParentID = apmID(s.ParentID)
	}
	ctx := &apmTxnContext{}
	method, hasMethod := attrValue(s, "http.request.method")
	if hasMethod {
		// The request object needs its method; without one its other fields stay tags.
		ctx.Request = &apmRequest{Method: method.String()}
	}
	for _, a := range s.Attrs {
		switch {
		case a.Key == "http.request.method" && hasMethod:
		case a.Key == "url.path" && hasMethod:
			ctx.Request.URL = &apmURL{Path: a.String()}
		case a.Key == "user_agent.original" && hasMethod:
			ctx.Request.Headers = map[string]string{"User-Agent": a.String()}
		case a.Key == "http.response.status_code" && a.Type == AttrInt:
			ctx.Response = &apmResponse{StatusCode: a.Int}
		default:
			ctx.Tags = addTag(ctx.Tags, a, svc)
		}
	}
	tx.Result = apmResult(ctx.Response, tx.Outcome)
	if ctx.Request != nil || ctx.Response != nil || ctx.Tags != nil {
		tx.Context = ctx
	}
	return tx
}

func apmSpanOf(s Span, traceID string, txn uint64, svc apmService) *apmSpan {
	sp := &apmSpan{
		ID: apmID(s.SpanID), TraceID: traceID, ParentID: apmID(s.ParentID), Name: s.Resource,
		Outcome: apmOutcome(s), Timestamp: s.Start.UnixMicro(), Duration: apmDuration(s.Duration.Microseconds()),
	}
	if txn != 0 {
		sp.TransactionID = apmID(txn)
	}
	sp.Type, sp.Subtype, sp.Action = apmSpanType(s)
	ctx := &apmSpanContext{}
	for _, a := range s.Attrs {
		switch {
		case a.Key == "db.system" && sp.Type == "db": // the subtype
		case a.Key == "db.name":
			apmDBOf(ctx).Instance = a.String()
		case a.Key == "db.statement":
			apmDBOf(ctx).Statement = a.String()
		case a.Key == "http.request.method":
			apmHTTPOf(ctx).Method = a.String()
		case a.Key == "http.response.status_code" && a.Type == AttrInt:
			apmHTTPOf(ctx).Response = &apmResponse{StatusCode: a.Int}
		case a.Key == "server.address":
			apmDestinationOf(ctx).Address = a.String()
		case a.Key == "server.port" && a.Type == AttrInt:
			apmDestinationOf(ctx).Port = a.Int
		default:
			ctx.Tags = addTag(ctx.Tags, a, svc)
		}
	}
	if ctx.DB != nil || ctx.HTTP != nil || ctx.Destination != nil || ctx.Tags != nil {
		sp.Context = ctx
	}
	return sp
}

func apmDBOf(c *apmSpanContext) *apmDB {
	if c.DB == nil {
		c.DB = &apmDB{Type: "sql"}
	}
	return c.DB
}

func apmHTTPOf(c *apmSpanContext) *apmSpanHTTP {
	if c.HTTP == nil {
		c.HTTP = &apmSpanHTTP{}
	}
	return c.HTTP
}

func apmDestinationOf(c *apmSpanContext) *apmDestination {
	if c.Destination == nil {
		c.Destination = &apmDestination{}
	}
	return c.Destination
}

// apmSpanType is the type, subtype and action an agent gives an exit or internal span.
func apmSpanType(s Span) (typ, subtype, action string) {
	if db, ok := attrValue(s, "db.system"); ok {
		return "db", db.String(), "query"
	}
	if s.Kind == KindClient {
		if _, ok := attrValue(s, "http.request.method"); ok {
			return "external", "http", ""
		}
		return "external", "", ""
	}
	return "app", "internal", ""
}

func apmOutcome(s Span) string {
	if s.Error {
		return "failure"
	}
	return "success"
}

// apmResult is a transaction's result as agents write it for HTTP: the status class ("HTTP 2xx").
func apmResult(r *apmResponse, outcome string) string {
	if r != nil && r.StatusCode >= 100 && r.StatusCode < 1000 {
		return fmt.Sprintf("HTTP %dxx", r.StatusCode/100)
	}
	return outcome
}

// addTag adds a to tags as a label (context.tags), its key as agents clean it ('.', '*' and '"'
// become '_'), unless it is a resource attribute the metadata already carries.
func addTag(tags map[string]any, a Attr, svc apmService) map[string]any {
	switch apmResourceKeys[a.Key] {
	case "environment":
		if a.String() == svc.Environment {
			return tags
		}
	case "version":
		if a.String() == svc.Version {
			return tags
		}
	}
	if tags == nil {
		tags = map[string]any{}
	}
	key := strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '"' {
			return '_'
		}
		return r
	}, a.Key)
	switch a.Type {
	case AttrInt:
		tags[key] = a.Int
	case AttrFloat:
		tags[key] = a.Float
	case AttrBool:
		tags[key] = a.Bool
	default:
		tags[key] = a.Str
	}
	return tags
}

func attrValue(s Span, key string) (Attr, bool) {
	for _, a := range s.Attrs {
		if a.Key == key {
			return a, true
		}
	}
	return Attr{}, false
}

func apmID(v uint64) string { return fmt.Sprintf("%016x", v) }
