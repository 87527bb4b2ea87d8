package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/collectorproc"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

// repoRoot is where the Makefile is; the tests run in test/e2e.
var repoRoot = func() string {
	abs, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return abs
}()

// binary is the collector under test: bin/tracegate unless TRACEGATE_BIN says otherwise.
func binary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("TRACEGATE_BIN"); b != "" {
		return b
	}
	b := filepath.Join(repoRoot, "bin", "tracegate")
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("%s is missing: run `make build` (or `make test`, which builds it) first", b)
	}
	return b
}

// gateway is a running tracegate pointed at an in-process Elasticsearch stand-in.
type gateway struct {
	es        *esstandin.Server
	proc      *collectorproc.Process
	endpoints tracesend.Endpoints
	bufferDir string // TRACEGATE_BUFFER_DIR
	// jaegerGRPC is the Jaeger gRPC receiver's address (tracesend has no Jaeger gRPC sender).
	jaegerGRPC string
	listeners  collectorproc.Listeners // every address the overlay moved
	opts       collectorproc.Options
	binary     string
	// earlierLogs keeps the log of processes that were restarted.
	earlierLogs string
}

// startGateway runs tracegate with configs/<config> on free loopback ports (an overlay config
// replaces only the listen addresses) and ELASTICSEARCH_URL naming the stand-in twice, so the
// comma-separated convention is exercised too. The collector's log is printed if the test fails.
func startGateway(t *testing.T, config string) *gateway {
	t.Helper()
	return startGatewayWith(t, gatewayOptions{config: config})
}

// gatewayOptions vary the gateway: the pipeline config, overlays from configs/ (e.g.
// "elasticsearch/ecs.yaml"), the Elasticsearch version the stand-in claims, and a setup step run
// against the stand-in before tracegate starts.
type gatewayOptions struct {
	config    string
	overlays  []string
	esVersion string
	beforeRun func(t *testing.T, es *esstandin.Server)
	env       []string // added to tracegate's environment
	// extraConfig is YAML merged over the configs (a test's own settings), as a last --config.
	extraConfig string
	// es is a stand-in another gateway already writes to (replicas of one tier); nil: a new one.
	es *esstandin.Server
}

func startGatewayWith(t *testing.T, o gatewayOptions) *gateway {
	t.Helper()
	es := o.es
	if es == nil {
		es = startStandin(t, o.esVersion)
	}

	if o.beforeRun != nil {
		o.beforeRun(t, es)
	}
	g := &gateway{es: es, binary: binary(t), bufferDir: filepath.Join(t.TempDir(), "buffer")}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Free ports are only free when picked: another test's process may take one before tracegate
	// binds it, so a start that failed on a taken port picks new ones.
	proc, err := collectorproc.StartOnFreePorts(ctx, 3, func() (collectorproc.Options, error) {
		return g.choosePorts(o)
	})
	if err != nil {
		t.Fatal(err)
	}
	g.proc = proc
	t.Cleanup(func() {
		if err := g.proc.Stop(30 * time.Second); err != nil {
			t.Errorf("stopping tracegate: %v", err)
		}
		if t.Failed() {
			t.Logf("tracegate log:\n%s%s", g.earlierLogs, g.proc.Log())
		}
	})
	return g
}

// startStandin runs an Elasticsearch stand-in that keeps its documents, claiming version (""
// for its default), until the test ends.
func startStandin(t *testing.T, version string) *esstandin.Server {
	t.Helper()
	es, err := esstandin.New(esstandin.Options{KeepDocuments: true, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	// A port below the kernel's ephemeral range (32768 and up by default): while a test has the
	// stand-in refuse connections its port is closed, and an outgoing connection of another test
	// could take a port of that range and keep the stand-in from listening again; none takes
	// one below it.
	err = errors.New("no port")
	for range 50 {
		if err = es.Start(fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = es.Close() })
	return es
}

// stopAndFlush stops tracegate cleanly (SIGTERM): its buffer delivers what it holds before it
// exits, so once this returns nothing more can reach the stand-in. Tests call it before they
// count duplicates, instead of sleeping and hoping late ones have shown up. The cleanup's Stop
// is then a no-op.
func (g *gateway) stopAndFlush(t *testing.T) {
	t.Helper()
	if err := g.proc.Stop(30 * time.Second); err != nil {
		t.Fatalf("stopping tracegate: %v", err)
	}
}

// choosePorts picks free loopback ports for every listener, writes the overlay config that moves
// the listeners there and returns the process options (kept for restarts on the same ports).
func (g *gateway) choosePorts(o gatewayOptions) (collectorproc.Options, error) {
	// Every configuration in configs/ has the ddtrace receiver, Jaeger's thrift_binary and zpages.
	l, overlay, err := collectorproc.PickListeners(collectorproc.ListenerOptions{DDTrace: true, ElasticAPM: true, Datakit: true, JaegerBinary: true, ZPages: true})
	if err != nil {
		return collectorproc.Options{}, err
	}
	g.endpoints = tracesend.Endpoints{
		OTLPGRPC: l.OTLPGRPC, OTLPHTTP: l.OTLPHTTP, Zipkin: l.Zipkin, JaegerHTTP: l.JaegerThriftHTTP, JaegerCompact: l.JaegerCompact, DDTrace: l.DDTrace,
		ElasticAPM: l.ElasticAPM,
	}
	g.jaegerGRPC, g.listeners = l.JaegerGRPC, l
	overlayPath := filepath.Join(filepath.Dir(g.bufferDir), "ports.yaml")
	if err := os.WriteFile(overlayPath, overlay, 0o600); err != nil {
		return collectorproc.Options{}, err
	}
	args := []string{"--config", filepath.Join(repoRoot, "configs", o.config)}
	for _, ov := range o.overlays {
		args = append(args, "--config", filepath.Join(repoRoot, "configs", ov))
	}
	if o.extraConfig != "" {
		extra := filepath.Join(filepath.Dir(g.bufferDir), "extra.yaml")
		if err := os.WriteFile(extra, []byte(o.extraConfig), 0o600); err != nil {
			return collectorproc.Options{}, err
		}
		args = append(args, "--config", extra)
	}
	g.opts = collectorproc.Options{
		Binary:    g.binary,
		Args:      append(args, "--config", overlayPath),
		Env:       append([]string{"ELASTICSEARCH_URL=" + g.es.URL() + "," + g.es.URL(), "TRACEGATE_BUFFER_DIR=" + g.bufferDir}, o.env...),
		HealthURL: "http://" + l.Health + "/",
	}
	return g.opts, nil
}

// start runs tracegate (again, after a stop or a kill: same ports, same buffer directory).
func (g *gateway) start(t *testing.T) {
	t.Helper()
	if g.proc != nil {
		g.earlierLogs += g.proc.Log() + "--- restarted ---\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proc, err := collectorproc.Start(ctx, g.opts)
	if err != nil {
		t.Fatal(err)
	}
	g.proc = proc
}

// otelDoc is the part of an otel-mode span document the tests check.
type otelDoc struct {
	TraceID      string         `json:"trace_id"`
	SpanID       string         `json:"span_id"`
	ParentSpanID string         `json:"parent_span_id"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind"`
	Attributes   map[string]any `json:"attributes"`
	Status       struct {
		Code string `json:"code"`
	} `json:"status"`
	Resource struct {
		Attributes map[string]any `json:"attributes"`
	} `json:"resource"`
}

// checkArrivedOnce asserts that every sent span is in the stand-in exactly once, in a traces data
// stream, with its identity, name, kind, status, service and attributes intact.
func checkArrivedOnce(t *testing.T, docs []esstandin.Document, sent []tracesend.Span) {
	t.Helper()
	byID := map[string][]otelDoc{}
	for _, d := range docs {
		if !strings.HasPrefix(d.Index, "traces-") {
			continue
		}
		var od otelDoc
		if err := json.Unmarshal(d.Source, &od); err != nil {
			t.Fatalf("document %s in %s: %v", d.ID, d.Index, err)
		}
		byID[od.TraceID+"/"+od.SpanID] = append(byID[od.TraceID+"/"+od.SpanID], od)
	}
	for _, s := range sent {
		got := byID[s.TraceID+"/"+s.SpanID]
		if len(got) != 1 {
			t.Errorf("span %s/%s (%s, %s): arrived %d times, want once", s.TraceID, s.SpanID, s.Service, s.Name, len(got))
			continue
		}
		d := got[0]
		for _, c := range []struct{ field, got, want string }{
			{"parent_span_id", d.ParentSpanID, s.ParentSpanID},
			{"name", d.Name, s.Name},
			{"kind", d.Kind, s.Kind},
			{"status.code", d.Status.Code, s.StatusCode},
			{"service.name", fmt.Sprint(d.Resource.Attributes["service.name"]), s.Service},
		} {
			if c.got != c.want {
				t.Errorf("span %s (%s): %s = %q, want %q", s.SpanID, s.Service, c.field, c.got, c.want)
			}
		}
		for k, want := range s.Attributes {
			if got, ok := d.Attributes[k]; !ok || got != want {
				t.Errorf("span %s (%s): attribute %s = %#v, want %#v", s.SpanID, s.Service, k, got, want)
			}
		}
	}
}
