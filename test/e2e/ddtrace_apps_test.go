package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// The traced apps (test/ddclients/node/app.js, test/ddclients/cmd/ddgo-app) make their spans with
// the tracers' own integrations (express, http; contrib/net/http, database/sql), so these tests
// check the receiver's default mapping ("semconv") on what real applications send: span names and
// kinds, semantic-convention attributes, the resource, the scope, errors as exception events, and
// that none of the tracers' bookkeeping tags is left in the span attributes.

const (
	appRequests  = 5 // GET /users/1..5 per run
	appFailures  = 1 // GET /fail/6: a handled error on the server span
	appEnv       = "e2e"
	appVersion   = "1.2.3"
	appUserAgent = "tracegate-e2e/1.0"
)

// ddAppRequest is one line of the apps' output: a request and the ids of the spans it made.
type ddAppRequest struct {
	TraceID          string `json:"trace_id"`
	ServerSpanID     string `json:"server_span_id"`
	ClientSpanID     string `json:"client_span_id"`
	DBSpanID         string `json:"db_span_id"` // ddgo-app only
	DBService        string `json:"db_service"` // ddgo-app only
	Query            string `json:"query"`      // ddgo-app only
	DownstreamSpanID string `json:"downstream_span_id"`
	Method           string `json:"method"`
	Path             string `json:"path"`
	Route            string `json:"route"`
	Status           int    `json:"status"`
	Error            string `json:"error"`
	URL              string `json:"url"`
	URLQuery         string `json:"url_query"`
	DownstreamURL    string `json:"downstream_url"`
}

// ddAppEnv is the environment of an app: ddClientEnv's, with an environment and version (which
// become deployment.environment.name and service.version), the host name reported (host.name) and
// the client IP recorded (client.address).
func ddAppEnv(agentURL string, extra ...string) []string {
	return ddClientEnv(append([]string{
		"DD_TRACE_AGENT_URL=" + agentURL,
		"DD_ENV=" + appEnv,
		"DD_VERSION=" + appVersion,
		"DD_TRACE_REPORT_HOSTNAME=true",
		"DD_TRACE_CLIENT_IP_ENABLED=true",
	}, extra...)...)
}

// TestDDTraceJSApp runs the express app on dd-trace-js in both of its trace protocols.
func TestDDTraceJSApp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node := npmCI(ctx, t)
	for _, version := range []string{"0.4", "0.5"} {
		t.Run("v"+version, func(t *testing.T) {
			g := startGateway(t, "default.yaml") //nolint:contextcheck // the gateway belongs to the subtest (its t.Cleanup stops it), not to ctx
			rec := newIntakeRecorder(t, g.endpoints.DDTrace)
			service := "e2e-ddjs-app-v" + version
			cmd := exec.CommandContext(ctx, node, "app.js", "--service", service,
				"--requests", strconv.Itoa(appRequests), "--failures", strconv.Itoa(appFailures))
			cmd.Dir = ddNodeDir
			cmd.Env = ddAppEnv(rec.url, "DD_TRACE_AGENT_PROTOCOL_VERSION="+version)
			reqs, pid := runDDApp(t, cmd)

			want := nodeAppSpans(t, reqs, service)
			docs := waitForAppDocs(ctx, t, g, want)
			rec.check(t, "nodejs", "/v"+version+"/traces")
			checkAppDocs(t, docs, want, appTracer{lang: "nodejs", version: pinnedNodeTracer(t), pid: pid, rec: rec})
		})
	}
}

// TestDDTraceGoApp runs the net/http + database/sql app on dd-trace-go.
func TestDDTraceGoApp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildDDGoProgram(ctx, t, "ddgo-app")
	g := startGateway(t, "default.yaml")
	rec := newIntakeRecorder(t, g.endpoints.DDTrace)
	const service = "e2e-ddgo-app"
	cmd := exec.CommandContext(ctx, bin, "-service", service,
		"-requests", strconv.Itoa(appRequests), "-failures", strconv.Itoa(appFailures))
	cmd.Dir = ddclientsDir
	cmd.Env = ddAppEnv(rec.url)
	reqs, pid := runDDApp(t, cmd)

	want := goAppSpans(t, reqs, service)
	docs := waitForAppDocs(ctx, t, g, want)
	rec.check(t, "go", "/v0.4/traces")
	checkAppDocs(t, docs, want, appTracer{lang: "go", version: pinnedGoTracer(t), pid: pid, rec: rec})
}

// runDDApp runs an app and returns the requests it printed and its process id (the tracer's
// process_id: the Go app re-executes itself in place, so the id stays).
func runDDApp(t *testing.T, cmd *exec.Cmd) ([]ddAppRequest, int) {
	t.Helper()
	out := runDDProgram(t, cmd)
	reqs := parseJSONLines[ddAppRequest](t, out)
	if len(reqs) != appRequests+appFailures {
		t.Fatalf("the app printed %d requests, want %d:\n%s", len(reqs), appRequests+appFailures, out)
	}
	for _, r := range reqs {
		if !hex128.MatchString(r.TraceID) || strings.HasPrefix(r.TraceID, "0000000000000000") {
			t.Fatalf("%s: trace id %q is not a 128-bit id in lowercase hex", r.Path, r.TraceID)
		}
		for _, id := range []string{r.ServerSpanID, r.ClientSpanID, r.DownstreamSpanID} {
			if !hex64.MatchString(id) {
				t.Fatalf("%s: span id %q is not 64-bit lowercase hex: %+v", r.Path, id, r)
			}
		}
	}
	return reqs, cmd.Process.Pid
}

// wantAppSpan is a span an app made and what its document must say.
type wantAppSpan struct {
	role                      string // server, client, db, downstream
	traceID, spanID, parentID string
	name                      string             // the exact span name, unless nameCheck is set
	nameCheck                 func(string) error // for names the spec leaves open
	kind                      string
	service                   string
	withVersion               bool   // the span carries DD_VERSION (spans of the app's own service)
	scope                     string // instrumentation scope name: the span's Datadog component
	chunkRoot                 bool   // the first span of its payload chunk: carries sampling.priority
	errMessage                string // a handled error: status Error with this message, one exception event
	errType, errStack         string // the exception event's type and a part of its stack trace
	attrs                     map[string]any
	// ddService is the span's own Datadog service when the tracer named the process's service
	// apart (_dd.base_service): the resource is the process's, and the span keeps its own service
	// in an attribute (peer.service or service.name).
	ddService string
}

func (w wantAppSpan) String() string {
	return fmt.Sprintf("%s span %s (%s, trace %s)", w.role, w.spanID, w.service, w.traceID)
}

// nodeAppSpans are the spans of app.js's requests: the express server span, its HTTP client
// child, and the inventory server's span under the client span.
func nodeAppSpans(t *testing.T, reqs []ddAppRequest, service string) []wantAppSpan {
	t.Helper()
	var want []wantAppSpan
	for _, r := range reqs {
		down := parseURL(t, r.DownstreamURL)
		server := wantAppSpan{
			role: "server", traceID: r.TraceID, spanID: r.ServerSpanID,
			name: "GET " + r.Route, kind: "Server", service: service, withVersion: true, scope: "express", chunkRoot: true,
			errMessage: r.Error, errType: "Error", errStack: "app.js",
			attrs: map[string]any{
				"http.request.method":       "GET",
				"http.route":                r.Route,
				"http.response.status_code": r.Status,
				"url.scheme":                "http",
				"url.path":                  r.Path,
				"url.query":                 r.URLQuery,
				"user_agent.original":       appUserAgent,
				"client.address":            "127.0.0.1",
				"operation.name":            "express.request",
				"resource.name":             "GET " + r.Route,
				"span.type":                 "web",
			},
		}
		client := wantAppSpan{
			role: "client", traceID: r.TraceID, spanID: r.ClientSpanID, parentID: r.ServerSpanID,
			name: "GET", kind: "Client", service: service, withVersion: true, scope: "http",
			attrs: map[string]any{
				"http.request.method":       "GET",
				"url.full":                  r.DownstreamURL,
				"server.address":            down.Hostname(),
				"server.port":               port(t, down),
				"http.response.status_code": 200,
				"operation.name":            "http.request",
				"resource.name":             "GET",
				"span.type":                 "http",
			},
		}
		downstream := wantAppSpan{
			role: "downstream", traceID: r.TraceID, spanID: r.DownstreamSpanID, parentID: r.ClientSpanID,
			name: "GET", kind: "Server", service: service, withVersion: true, scope: "http", chunkRoot: true,
			attrs: map[string]any{
				"http.request.method":       "GET",
				"http.response.status_code": 200,
				"url.scheme":                "http",
				"url.path":                  down.Path,
				"client.address":            "127.0.0.1",
				"operation.name":            "web.request",
				"resource.name":             "GET",
				"span.type":                 "web",
			},
		}
		want = append(want, server, client, downstream)
	}
	return want
}

// goAppSpans are the spans of ddgo-app's requests: the server span, its database and HTTP client
// children, and the inventory server's span under the client span.
func goAppSpans(t *testing.T, reqs []ddAppRequest, service string) []wantAppSpan {
	t.Helper()
	var want []wantAppSpan
	for _, r := range reqs {
		if !hex64.MatchString(r.DBSpanID) || r.DBService == "" || r.Query == "" {
			t.Fatalf("%s: no database span: %+v", r.Path, r)
		}
		down := parseURL(t, r.DownstreamURL)
		server := wantAppSpan{
			role: "server", traceID: r.TraceID, spanID: r.ServerSpanID,
			name: "GET " + r.Route, kind: "Server", service: service, withVersion: true, scope: "net/http", chunkRoot: true,
			errMessage: r.Error, errType: "*errors.errorString", errStack: "main.(*app).handle",
			attrs: map[string]any{
				"http.request.method":       "GET",
				"http.route":                r.Route,
				"http.response.status_code": r.Status,
				"url.scheme":                "http",
				"url.path":                  r.Path,
				"url.query":                 r.URLQuery,
				"user_agent.original":       appUserAgent,
				"client.address":            "127.0.0.1",
				"operation.name":            "http.request",
				"resource.name":             "GET " + r.Route,
				"span.type":                 "web",
			},
		}
		db := wantAppSpan{
			role: "db", traceID: r.TraceID, spanID: r.DBSpanID, parentID: r.ServerSpanID,
			// The tracer gives the span the service sqlite.db and the app's as _dd.base_service.
			nameCheck: dbSpanName("other_sql"), kind: "Client", service: service, withVersion: true, ddService: r.DBService, scope: "database/sql",
			attrs: map[string]any{
				// contrib/database/sql knows no db.system for the sqlite driver: it sends
				// db.system "other_sql" (semantic conventions' value for an unknown SQL database).
				"db.system.name": "other_sql",
				"db.query.text":  r.Query,
				"operation.name": "sqlite.query",
				"resource.name":  r.Query,
				"span.type":      "sql",
			},
		}
		client := wantAppSpan{
			role: "client", traceID: r.TraceID, spanID: r.ClientSpanID, parentID: r.ServerSpanID,
			name: "GET", kind: "Client", service: service, withVersion: true, scope: "net/http",
			attrs: map[string]any{
				"http.request.method":       "GET",
				"url.full":                  r.DownstreamURL,
				"server.address":            down.Hostname(),
				"server.port":               port(t, down),
				"http.response.status_code": 200,
				"operation.name":            "http.request",
				"resource.name":             "http.request", // contrib/net/http's client spans have no resource of their own
				"span.type":                 "http",
			},
		}
		downstream := wantAppSpan{
			role: "downstream", traceID: r.TraceID, spanID: r.DownstreamSpanID, parentID: r.ClientSpanID,
			name: "GET /stock/{sku}", kind: "Server", service: service, withVersion: true, scope: "net/http", chunkRoot: true,
			attrs: map[string]any{
				"http.request.method":       "GET",
				"http.route":                "/stock/{sku}",
				"http.response.status_code": 200,
				"url.scheme":                "http",
				"url.path":                  down.Path,
				"user_agent.original":       "Go-http-client/1.1",
				"client.address":            "127.0.0.1",
				"operation.name":            "http.request",
				"resource.name":             "GET /stock/{sku}",
				"span.type":                 "web",
			},
		}
		want = append(want, server, db, client, downstream)
	}
	return want
}

// dbSpanName accepts "{db.operation.name} {target}" (or the operation alone) or the db system,
// never the query text.
func dbSpanName(system string) func(string) error {
	return func(name string) error {
		upper := strings.ToUpper(name)
		if strings.Contains(upper, "FROM") || strings.Contains(upper, "WHERE") || strings.Contains(name, "?") {
			return fmt.Errorf("the name %q holds the query text", name)
		}
		if name != system && name != "SELECT" && !strings.HasPrefix(name, "SELECT ") {
			return fmt.Errorf("the name %q is neither \"SELECT [target]\" nor the db system %q", name, system)
		}
		return nil
	}
}

func parseURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		t.Fatalf("the app printed the URL %q: %v", s, err)
	}
	return u
}

func port(t *testing.T, u *url.URL) int {
	t.Helper()
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("URL %s has no port", u)
	}
	return p
}

// appDoc is a document of the stand-in, decoded with its numbers as json.Number (the otel mapping
// writes a double with a radix point, an integer without).
type appDoc struct {
	index        string
	id           string
	source       json.RawMessage
	TraceID      string         `json:"trace_id"`
	SpanID       string         `json:"span_id"`
	ParentSpanID string         `json:"parent_span_id"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind"`
	EventName    string         `json:"event_name"`
	Attributes   map[string]any `json:"attributes"`
	Status       struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
	Resource struct {
		Attributes map[string]any `json:"attributes"`
	} `json:"resource"`
	Scope struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"scope"`
}

func decodeAppDocs(t *testing.T, docs []esstandin.Document) []appDoc {
	t.Helper()
	out := make([]appDoc, 0, len(docs))
	for _, d := range docs {
		dec := json.NewDecoder(bytes.NewReader(d.Source))
		dec.UseNumber()
		var doc appDoc
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("document %s in %s: %v\n%s", d.ID, d.Index, err, d.Source)
		}
		doc.index, doc.id, doc.source = d.Index, d.ID, d.Source
		out = append(out, doc)
	}
	return out
}

// sameValue compares a document's value with a wanted one: an int must be an integer in the
// document, a string a string.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case int:
		n, ok := got.(json.Number)
		if !ok || strings.ContainsAny(n.String(), ".eE") {
			return false
		}
		i, err := n.Int64()
		return err == nil && i == int64(w)
	case string:
		g, ok := got.(string)
		return ok && g == w
	default:
		return fmt.Sprint(got) == fmt.Sprint(want)
	}
}

// show prints a document's value as in the document: a number bare, a string quoted.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "(absent)"
	case json.Number:
		return v.String()
	case int:
		return strconv.Itoa(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprintf("%#v", v)
		}
		return string(b)
	}
}

// integer is a document value that is an integer.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(n.String(), ".eE") {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// waitForAppDocs waits for one document per wanted span and one exception event per error, stops
// tracegate (so no late redelivery can come) and returns every document. A timeout fails the test
// with the documents that did arrive.
func waitForAppDocs(ctx context.Context, t *testing.T, g *gateway, want []wantAppSpan) []appDoc {
	t.Helper()
	n := len(want)
	for _, w := range want {
		if w.errMessage != "" {
			n++
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := g.es.WaitForDocuments(waitCtx, n)
	g.stopAndFlush(t)
	docs := decodeAppDocs(t, g.es.Documents())
	st := g.es.Stats()
	if err != nil || st.DuplicateSpans != 0 || st.RejectedItems != 0 {
		logAppDocs(t, docs, "")
		t.Fatalf("want %d documents (%d spans and their exception events): %v; stand-in stats: %+v", n, len(want), err, st)
	}
	return docs
}

func logAppDocs(t *testing.T, docs []appDoc, traceID string) {
	t.Helper()
	for _, d := range docs {
		if traceID == "" || d.TraceID == traceID {
			t.Logf("document in %s: %s", d.index, d.source)
		}
	}
}

// forbiddenAttrs are the tracers' bookkeeping tags and the Datadog names of what the semconv
// mapping renames: none may be left in a span's attributes.
var forbiddenAttrs = []string{
	"_sampling_priority_v1", "_sample_rate", "_top_level", "datadog.span.id", "datadog.trace.id",
	"dd.span.Resource", "span.kind", "env", "version", "language", "runtime-id", "process_id",
	"error", "error.message", "error.msg", "error.type", "error.stack",
	"error.handling_stack", // dd-trace-go's error.stack for an error set with SetTag
	"http.method", "http.status_code", "http.url", "http.useragent", "out.host", "peer.hostname",
	"db.type", "sql.query",
}

var forbiddenPrefixes = []string{"_dd.", "_dd1."}

// appTracer is what the resource of every document must say about the tracer.
type appTracer struct {
	lang    string // Datadog-Meta-Lang
	version string // the pinned tracer version
	pid     int
	rec     *intakeRecorder
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// checkAppDocs checks every document against the wanted spans: each span once with its name,
// kind, ids, status, attributes, resource and scope; no bookkeeping tag in any span's attributes;
// one exception event per error and no other document.
func checkAppDocs(t *testing.T, docs []appDoc, want []wantAppSpan, tr appTracer) {
	t.Helper()
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	langVersion := tr.rec.header("Datadog-Meta-Lang-Version")
	if langVersion == "" {
		t.Error("the tracer sent no Datadog-Meta-Lang-Version")
	}
	spans := map[string][]appDoc{}
	events := map[string][]appDoc{}
	for _, d := range docs {
		switch {
		case strings.HasPrefix(d.index, "traces-"):
			spans[d.SpanID] = append(spans[d.SpanID], d)
		case strings.HasPrefix(d.index, "logs-") && d.EventName == "exception":
			events[d.SpanID] = append(events[d.SpanID], d)
		default:
			t.Errorf("unexpected document in %s: %s", d.index, d.source)
		}
	}

	wanted := map[string]bool{}
	instanceIDs := map[string]bool{}
	for _, w := range want {
		wanted[w.spanID] = true
		got := spans[w.spanID]
		if len(got) != 1 {
			t.Errorf("%s: %d documents, want 1", w, len(got))
			continue
		}
		d := got[0]
		errorf := func(format string, args ...any) {
			t.Helper()
			t.Errorf("%s: %s", w, fmt.Sprintf(format, args...))
		}
		if d.TraceID != w.traceID {
			errorf("trace_id %q, want %q", d.TraceID, w.traceID)
		}
		if d.ParentSpanID != w.parentID {
			errorf("parent_span_id %q, want %q", d.ParentSpanID, w.parentID)
		}
		if w.nameCheck != nil {
			if err := w.nameCheck(d.Name); err != nil {
				errorf("%v", err)
			}
		} else if d.Name != w.name {
			errorf("name %q, want %q", d.Name, w.name)
		}
		if d.Kind != w.kind {
			errorf("kind %q, want %q", d.Kind, w.kind)
		}
		if w.errMessage != "" {
			if d.Status.Code != "Error" || d.Status.Message != w.errMessage {
				errorf("status %q %q, want Error %q", d.Status.Code, d.Status.Message, w.errMessage)
			}
		} else if d.Status.Code != "" && d.Status.Code != "Unset" {
			errorf("status %q %q, want Unset", d.Status.Code, d.Status.Message)
		}

		for k, v := range w.attrs {
			if got, ok := d.Attributes[k]; !ok || !sameValue(got, v) {
				errorf("attributes.%s = %s, want %s", k, show(got), show(v))
			}
		}
		if w.ddService != "" && !sameValue(d.Attributes["peer.service"], w.ddService) && !sameValue(d.Attributes["service.name"], w.ddService) {
			errorf("the span's Datadog service %q is in neither attributes.peer.service nor attributes.service.name", w.ddService)
		}
		if p, ok := d.Attributes["sampling.priority"]; w.chunkRoot && !ok {
			errorf("no attributes.sampling.priority on the chunk's root span")
		} else if _, isInt := integer(p); ok && (!w.chunkRoot || !isInt) {
			errorf("attributes.sampling.priority = %s (only the chunk's root span carries it, an integer)", show(p))
		}
		for k := range d.Attributes {
			if forbiddenAttr(k) {
				errorf("attributes.%s = %s: a Datadog bookkeeping tag or old name, not in the semconv mapping", k, show(d.Attributes[k]))
			}
		}

		res := d.Resource.Attributes
		wantRes := map[string]any{
			"service.name":                w.service,
			"telemetry.sdk.name":          "datadog",
			"telemetry.sdk.language":      tr.lang,
			"telemetry.sdk.version":       tr.version,
			"host.name":                   hostname,
			"process.pid":                 tr.pid,
			"deployment.environment.name": appEnv,
		}
		if w.withVersion {
			wantRes["service.version"] = appVersion
		}
		for k, v := range wantRes {
			if got, ok := res[k]; !ok || !sameValue(got, v) {
				errorf("resource.attributes.%s = %s, want %s", k, show(got), show(v))
			}
		}
		if got, _ := res["process.runtime.version"].(string); trimVersion(got) != trimVersion(langVersion) || got == "" {
			errorf("resource.attributes.process.runtime.version = %q, want the tracer's Datadog-Meta-Lang-Version %q", got, langVersion)
		}
		id, _ := res["service.instance.id"].(string)
		if !uuidRE.MatchString(id) {
			errorf("resource.attributes.service.instance.id = %q, want the tracer's runtime-id (a UUID)", id)
		}
		instanceIDs[id] = true
		if d.Scope.Name != w.scope || d.Scope.Version != tr.version {
			errorf("scope %q %q, want %q %q", d.Scope.Name, d.Scope.Version, w.scope, tr.version)
		}

		evs := events[w.spanID]
		if w.errMessage == "" {
			if len(evs) != 0 {
				errorf("%d exception events, want none", len(evs))
			}
			continue
		}
		if len(evs) != 1 {
			errorf("%d exception events, want 1", len(evs))
			continue
		}
		ev := evs[0]
		if ev.TraceID != w.traceID {
			errorf("exception event trace_id %q", ev.TraceID)
		}
		if got, _ := ev.Attributes["exception.message"].(string); got != w.errMessage {
			errorf("exception event: exception.message %q, want %q", got, w.errMessage)
		}
		if got, _ := ev.Attributes["exception.type"].(string); got != w.errType {
			errorf("exception event: exception.type %q, want %q", got, w.errType)
		}
		if got, _ := ev.Attributes["exception.stacktrace"].(string); !strings.Contains(got, w.errStack) {
			errorf("exception event: exception.stacktrace %q, want a stack trace through %s", got, w.errStack)
		}
	}
	if len(instanceIDs) != 1 {
		t.Errorf("service.instance.id: %d different values over the documents, want one (the process's runtime-id): %v", len(instanceIDs), instanceIDs)
	}
	var extra []string
	for id := range spans {
		if !wanted[id] {
			extra = append(extra, id)
		}
	}
	for id := range events {
		if !wanted[id] {
			extra = append(extra, "event of "+id)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		t.Errorf("documents of spans the app did not make: %v", extra)
	}

	if t.Failed() {
		logAppDocs(t, docs, "")
		return
	}
	// One trace with an error, for the reader.
	for _, w := range want {
		if w.errMessage != "" {
			logAppDocs(t, docs, w.traceID)
			break
		}
	}
}

func forbiddenAttr(k string) bool {
	for _, p := range forbiddenPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return slices.Contains(forbiddenAttrs, k)
}

// trimVersion drops a "v" or "go" prefix: Node reports v20.1.2, Go 1.26.8.
func trimVersion(v string) string {
	return strings.TrimPrefix(strings.TrimPrefix(v, "go"), "v")
}
