package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

// The real Datadog tracers live outside the root module, so their dependencies never reach the
// collector binary: test/ddclients (a Go module with dd-trace-go v2) and test/ddclients/node (an
// npm package with dd-trace 5.x). Each program sends traces of a server span with a failing client
// child and prints what it sent as JSON lines (ddSentSpan).
var (
	ddclientsDir = filepath.Join(repoRoot, "test", "ddclients")
	ddNodeDir    = filepath.Join(ddclientsDir, "node")
)

const ddTraces = 5 // traces per run, two spans each

// ddSentSpan is one line of the programs' output.
type ddSentSpan struct {
	TraceID  string             `json:"trace_id"`
	SpanID   string             `json:"span_id"`
	ParentID string             `json:"parent_id"`
	Name     string             `json:"name"` // Datadog operation name
	Resource string             `json:"resource"`
	Service  string             `json:"service"`
	Type     string             `json:"type"`
	Error    bool               `json:"error"`
	Meta     map[string]string  `json:"meta"`
	Metrics  map[string]float64 `json:"metrics"`
	// SamplingPriority is the tracer's decision, on the root's line (send.js only).
	SamplingPriority *int `json:"sampling_priority"`
}

// TestDDTraceGo sends traces with dd-trace-go v2 through tracegate's ddtrace receiver.
func TestDDTraceGo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildDDGoSend(ctx, t)
	g := startGateway(t, "default.yaml")
	rec := newIntakeRecorder(t, g.endpoints.DDTrace)

	const service = "e2e-dd-trace-go"
	cmd := exec.CommandContext(ctx, bin, "-service", service, "-traces", strconv.Itoa(ddTraces))
	cmd.Dir = ddclientsDir
	cmd.Env = ddClientEnv("DD_TRACE_AGENT_URL=" + rec.url)
	sent := runDDClient(t, cmd)

	want, failed := expectedDDSpans(t, sent, service)
	docs := waitForDDSpans(ctx, t, g, want, failed)
	rec.check(t, "go", "/v0.4/traces")
	checkDDResource(t, docs, service, rec, "go", pinnedGoTracer(t))
}

// TestDDTraceJS sends traces with the Node.js dd-trace through tracegate's ddtrace receiver, in
// both of the tracer's trace protocols.
func TestDDTraceJS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node := npmCI(ctx, t)
	for _, version := range []string{"0.4", "0.5"} {
		t.Run("v"+version, func(t *testing.T) {
			g := startGateway(t, "default.yaml") //nolint:contextcheck // the gateway belongs to the subtest (its t.Cleanup stops it, after ctx may be done), not to ctx
			rec := newIntakeRecorder(t, g.endpoints.DDTrace)

			service := "e2e-dd-trace-js-v" + version
			cmd := exec.CommandContext(ctx, node, "send.js", "--service", service, "--traces", strconv.Itoa(ddTraces))
			cmd.Dir = ddNodeDir
			cmd.Env = ddClientEnv("DD_TRACE_AGENT_URL="+rec.url, "DD_TRACE_AGENT_PROTOCOL_VERSION="+version)
			sent := runDDClient(t, cmd)

			want, failed := expectedDDSpans(t, sent, service)
			docs := waitForDDSpans(ctx, t, g, want, failed)
			rec.check(t, "nodejs", "/v"+version+"/traces")
			checkDDResource(t, docs, service, rec, "nodejs", pinnedNodeTracer(t))
		})
	}
}

// ddClientEnv is the environment of a sender: this process's, without any Datadog or OpenTelemetry
// setting that could change what the tracer does, plus a tracer that sends traces only (no remote
// configuration polling, telemetry, runtime metrics, client-side stats or startup log), plus extra.
func ddClientEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DD_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"DD_TRACE_STARTUP_LOGS=false",
		"DD_REMOTE_CONFIGURATION_ENABLED=false",
		"DD_INSTRUMENTATION_TELEMETRY_ENABLED=false",
		"DD_RUNTIME_METRICS_ENABLED=false",
		"DD_TRACE_STATS_COMPUTATION_ENABLED=false",
		"DD_DATA_STREAMS_ENABLED=false",
		"DD_TRACE_SAMPLE_RATE=1",
	)
	return append(env, extra...)
}

// buildDDGoSend builds test/ddclients/cmd/ddgo-send into a temporary directory.
func buildDDGoSend(ctx context.Context, t *testing.T) string {
	t.Helper()
	return buildDDGoProgram(ctx, t, "ddgo-send")
}

// buildDDGoProgram builds test/ddclients/cmd/<name> into a temporary directory.
func buildDDGoProgram(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build test/ddclients/cmd/%s: %v", name, err)
	}
	bin := filepath.Join(t.TempDir(), name)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = ddclientsDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s in %s: %v\n%s", name, ddclientsDir, err, out)
	}
	t.Logf("built %s in %s", name, time.Since(start).Round(time.Millisecond))
	return bin
}

var npmOnce struct {
	sync.Mutex
	done map[string]bool // by directory
}

// npmCI installs test/ddclients/node's locked dependencies (npmCIIn) and returns the path of node.
func npmCI(ctx context.Context, t *testing.T) string {
	t.Helper()
	return npmCIIn(ctx, t, ddNodeDir)
}

// npmCIIn installs dir's locked dependencies with `npm ci`, unless node_modules already holds
// exactly them (a stamp of package-lock.json and the Node version, written after a successful
// `npm ci`, says so). It returns the path of node. A missing node or npm fails the test.
func npmCIIn(ctx context.Context, t *testing.T, dir string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (20 or later) is needed to run the Node.js clients: %v", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to install the Node.js clients (npm ci in %s): %v", dir, err)
	}
	npmOnce.Lock()
	defer npmOnce.Unlock()
	if npmOnce.done[dir] {
		return node
	}
	version, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(append(lock, 0), bytes.TrimSpace(version)...))
	stampPath := filepath.Join(dir, "node_modules", ".tracegate-npm-ci")
	stamp := hex.EncodeToString(sum[:]) + "\n"
	done := func() string {
		if npmOnce.done == nil {
			npmOnce.done = map[string]bool{}
		}
		npmOnce.done[dir] = true
		return node
	}
	if b, err := os.ReadFile(stampPath); err == nil && string(b) == stamp {
		t.Logf("%s: node_modules is up to date with package-lock.json (node %s)", dir, bytes.TrimSpace(version))
		return done()
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(stampPath, []byte(stamp), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("npm ci in %s: %s", dir, time.Since(start).Round(time.Millisecond))
	return done()
}

// runDDClient runs a sender and parses what it printed. The tracer's own log goes to stderr.
func runDDClient(t *testing.T, cmd *exec.Cmd) []ddSentSpan {
	t.Helper()
	stdout := runDDProgram(t, cmd)
	sent := parseJSONLines[ddSentSpan](t, stdout)
	if len(sent) != 2*ddTraces {
		t.Fatalf("the sender printed %d spans, want %d:\n%s", len(sent), 2*ddTraces, stdout)
	}
	return sent
}

// runDDProgram runs a tracer program and returns what it printed on stdout; its stderr (the
// tracer's own log) is logged. A non-zero exit fails the test.
func runDDProgram(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if stderr.Len() > 0 {
		t.Logf("%s stderr:\n%s", filepath.Base(cmd.Path), stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s", strings.Join(cmd.Args, " "), err, stdout.Bytes())
	}
	t.Logf("%s ran in %s", filepath.Base(cmd.Path), time.Since(start).Round(time.Millisecond))
	return stdout.Bytes()
}

// parseJSONLines decodes each non-empty line of out as a T.
func parseJSONLines[T any](t *testing.T, out []byte) []T {
	t.Helper()
	var all []T
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		all = append(all, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return all
}

var (
	hex128 = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex64  = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// expectedDDSpans turns what a tracer sent into the documents the ddtrace receiver's default
// (semconv) mapping must produce (receiver/ddtracereceiver/testdata/golden shows it): an HTTP
// server span is named "<method> <route>", other spans by their low-cardinality resource; the
// Datadog operation, resource and type are kept as operation.name, resource.name, span.type;
// span.kind gives the kind and error the status (Unset otherwise); Datadog tag names become the
// conventions' (http.method, http.status_code as an int, peer.hostname), error tags leave the
// span (they are its status and exception event), other meta stays as strings and metrics as
// numbers. It also returns the error message of each failed span, by span id.
func expectedDDSpans(t *testing.T, sent []ddSentSpan, service string) (spans []tracesend.Span, failed map[string]string) {
	t.Helper()
	renamed := map[string]string{"http.method": "http.request.method", "peer.hostname": "server.address"}
	traces := map[string]bool{}
	failed = map[string]string{}
	for _, s := range sent {
		if !hex128.MatchString(s.TraceID) || strings.HasPrefix(s.TraceID, "0000000000000000") {
			t.Fatalf("span %s: trace id %q is not a 128-bit id in lowercase hex", s.SpanID, s.TraceID)
		}
		if !hex64.MatchString(s.SpanID) || (s.ParentID != "" && !hex64.MatchString(s.ParentID)) {
			t.Fatalf("span %q (parent %q): ids are not 64-bit lowercase hex", s.SpanID, s.ParentID)
		}
		if s.Service != service {
			t.Fatalf("span %s: service %q, want %q", s.SpanID, s.Service, service)
		}
		traces[s.TraceID] = true
		attrs := map[string]any{"operation.name": s.Name, "resource.name": s.Resource, "span.type": s.Type}
		for k, v := range s.Meta {
			switch k {
			case "span.kind", "error.message":
				continue
			case "http.status_code":
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("span %s: http.status_code %q", s.SpanID, v)
				}
				attrs["http.response.status_code"] = float64(n) // an integer attribute; JSON makes it a float64
				continue
			}
			if r, ok := renamed[k]; ok {
				k = r
			}
			attrs[k] = v
		}
		for k, v := range s.Metrics {
			attrs[k] = v
		}
		name := s.Resource
		if method := s.Meta["http.method"]; method != "" && s.Meta["span.kind"] == "server" {
			name = strings.TrimSpace(method + " " + s.Meta["http.route"])
		}
		kind := map[string]string{"server": "Server", "client": "Client", "producer": "Producer", "consumer": "Consumer", "internal": "Internal"}[s.Meta["span.kind"]]
		status := ""
		if s.Error {
			status = "Error"
			failed[s.SpanID] = s.Meta["error.message"]
		}
		spans = append(spans, tracesend.Span{
			TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentID,
			Name: name, Kind: kind, StatusCode: status, Service: s.Service, Attributes: attrs,
		})
	}
	if len(traces) != ddTraces {
		t.Fatalf("the sender printed %d distinct trace ids, want %d", len(traces), ddTraces)
	}
	return spans, failed
}

// waitForDDSpans waits for the spans in the stand-in, checks that each arrived once and intact, that
// an error span carries its error message (failed, by span id) as status message, and that each
// error span has one exception event (the elasticsearch exporter writes span events to logs-*),
// and returns the documents.
func waitForDDSpans(ctx context.Context, t *testing.T, g *gateway, want []tracesend.Span, failed map[string]string) []esstandin.Document {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := g.es.WaitForDocuments(waitCtx, len(want)+len(failed)); err != nil {
		t.Fatalf("%v; stand-in stats: %+v", err, g.es.Stats())
	}
	// The tracer has exited; once tracegate has flushed and exited too, no late duplicate (a
	// buffer redelivery) can come.
	g.stopAndFlush(t)
	docs := g.es.Documents()
	checkArrivedOnce(t, docs, want)
	st := g.es.Stats()
	if st.Documents != len(want)+len(failed) || st.DuplicateSpans != 0 || st.RejectedItems != 0 {
		t.Errorf("stand-in: %d documents, %d duplicates, %d rejected; want %d (%d spans, %d exception events), 0, 0 (%+v)",
			st.Documents, st.DuplicateSpans, st.RejectedItems, len(want)+len(failed), len(want), len(failed), st)
	}

	events := map[string]int{}
	for _, d := range docs {
		var doc struct {
			SpanID    string `json:"span_id"`
			EventName string `json:"event_name"`
			Status    struct {
				Message string `json:"message"`
			} `json:"status"`
			Attributes map[string]any `json:"attributes"`
		}
		if err := json.Unmarshal(d.Source, &doc); err != nil {
			t.Fatalf("document %s in %s: %v", d.ID, d.Index, err)
		}
		msg, isFailed := failed[doc.SpanID]
		switch {
		case strings.HasPrefix(d.Index, "traces-"):
			// checkArrivedOnce reads only the status code.
			if isFailed && doc.Status.Message != msg {
				t.Errorf("span %s: status.message = %q, want %q", doc.SpanID, doc.Status.Message, msg)
			}
		case strings.HasPrefix(d.Index, "logs-") && doc.EventName == "exception":
			events[doc.SpanID]++
			if !isFailed {
				t.Errorf("span %s has an exception event but no error", doc.SpanID)
			} else if got := fmt.Sprint(doc.Attributes["exception.message"]); got != msg {
				t.Errorf("span %s: exception event message %q, want %q", doc.SpanID, got, msg)
			} else if typ, _ := doc.Attributes["exception.type"].(string); typ == "" {
				t.Errorf("span %s: exception event without exception.type: %v", doc.SpanID, doc.Attributes)
			}
		default:
			t.Errorf("unexpected document in %s: %s", d.Index, d.Source)
		}
	}
	for id := range failed {
		if events[id] != 1 {
			t.Errorf("span %s: %d exception events, want 1", id, events[id])
		}
	}
	for _, d := range docs {
		var doc struct {
			TraceID string `json:"trace_id"`
		}
		// Every document when something is wrong, else those of the first trace, for the reader.
		if t.Failed() || (json.Unmarshal(d.Source, &doc) == nil && doc.TraceID == want[0].TraceID) {
			t.Logf("document in %s: %s", d.Index, d.Source)
		}
	}
	return docs
}

// checkDDResource checks the resource attributes the receiver derives from the tracer's request
// headers (Datadog-Meta-Lang, -Lang-Version, -Tracer-Version) on every span document.
func checkDDResource(t *testing.T, docs []esstandin.Document, service string, rec *intakeRecorder, lang, sdkVersion string) {
	t.Helper()
	langVersion := rec.header("Datadog-Meta-Lang-Version")
	if langVersion == "" {
		t.Error("the tracer sent no Datadog-Meta-Lang-Version")
	}
	want := map[string]string{
		"service.name":            service,
		"telemetry.sdk.name":      "datadog",
		"telemetry.sdk.language":  lang,
		"telemetry.sdk.version":   sdkVersion,
		"process.runtime.version": langVersion,
	}
	n := 0
	for _, d := range docs {
		if !strings.HasPrefix(d.Index, "traces-") {
			continue
		}
		var doc struct {
			Resource struct {
				Attributes map[string]any `json:"attributes"`
			} `json:"resource"`
			Scope struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"scope"`
		}
		if err := json.Unmarshal(d.Source, &doc); err != nil {
			t.Fatalf("document %s: %v", d.ID, err)
		}
		n++
		for k, v := range want {
			if got := fmt.Sprint(doc.Resource.Attributes[k]); got != v {
				t.Errorf("document %s: resource.attributes.%s = %q, want %q", d.ID, k, got, v)
			}
		}
		if doc.Scope.Name != "datadog" || doc.Scope.Version != sdkVersion {
			t.Errorf("document %s: scope %q %q, want datadog %s (spans without a component tag)", d.ID, doc.Scope.Name, doc.Scope.Version, sdkVersion)
		}
		if n == 1 {
			t.Logf("resource attributes: %v", doc.Resource.Attributes)
		}
	}
	if n == 0 {
		t.Error("no span documents")
	}
}

// pinnedGoTracer is the dd-trace-go version test/ddclients/go.mod requires, as the tracer reports
// it (Datadog-Meta-Tracer-Version).
func pinnedGoTracer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ddclientsDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/DataDog/dd-trace-go/v2 (v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("test/ddclients/go.mod does not require github.com/DataDog/dd-trace-go/v2")
	}
	return string(m[1])
}

// pinnedNodeTracer is the dd-trace version test/ddclients/node/package.json pins.
func pinnedNodeTracer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ddNodeDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	v := pkg.Dependencies["dd-trace"]
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Fatalf("package.json: dd-trace %q is not an exact version", v)
	}
	return v
}

// intakeRecorder is a reverse proxy in front of the ddtrace receiver that records what a tracer
// asked for, so the test can tell which endpoints and headers a real tracer uses.
type intakeRecorder struct {
	url  string
	mu   sync.Mutex
	reqs []intakeRequest
}

type intakeRequest struct {
	method, path, contentType string
	status                    int
	headers                   http.Header
}

// recordedHeaders are the request headers worth logging.
var recordedHeaders = []string{
	"Datadog-Meta-Lang", "Datadog-Meta-Lang-Version", "Datadog-Meta-Lang-Interpreter", "Datadog-Meta-Tracer-Version",
	"X-Datadog-Trace-Count", "Datadog-Send-Real-Http-Status", "Datadog-Client-Computed-Stats",
	"Datadog-Client-Computed-Top-Level", "Datadog-Container-Id", "Datadog-Entity-Id", "Datadog-External-Env",
}

func newIntakeRecorder(t *testing.T, target string) *intakeRecorder {
	t.Helper()
	u, err := url.Parse("http://" + target)
	if err != nil {
		t.Fatal(err)
	}
	r := &intakeRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(resp *http.Response) error {
		req := resp.Request
		h := http.Header{}
		for _, k := range recordedHeaders {
			if v := req.Header.Values(k); len(v) > 0 {
				h[k] = v
			}
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, intakeRequest{method: req.Method, path: req.URL.Path, contentType: req.Header.Get("Content-Type"), status: resp.StatusCode, headers: h})
		r.mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *intakeRecorder) requests() []intakeRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]intakeRequest(nil), r.reqs...)
}

// header is a header's value on the first trace request.
func (r *intakeRecorder) header(k string) string {
	for _, q := range r.requests() {
		if strings.HasSuffix(q.path, "/traces") {
			return q.headers.Get(k)
		}
	}
	return ""
}

// check logs every request and asserts that traces went to tracesPath only, with the tracer's
// language header, and that the receiver answered every request with a success.
func (r *intakeRecorder) check(t *testing.T, lang, tracesPath string) {
	t.Helper()
	traces := 0
	for _, q := range r.requests() {
		t.Logf("tracer request: %s %s (%s) -> %d %v", q.method, q.path, q.contentType, q.status, q.headers)
		if q.status >= 300 {
			t.Errorf("%s %s: the receiver answered %d", q.method, q.path, q.status)
		}
		if !strings.HasSuffix(q.path, "/traces") {
			continue
		}
		traces++
		if q.path != tracesPath {
			t.Errorf("%s %s: traces went to %s, want %s", q.method, q.path, q.path, tracesPath)
		}
		if got := q.headers.Get("Datadog-Meta-Lang"); got != lang {
			t.Errorf("%s %s: Datadog-Meta-Lang %q, want %q", q.method, q.path, got, lang)
		}
	}
	if traces == 0 {
		t.Errorf("the tracer sent no trace request (want %s)", tracesPath)
	}
}
