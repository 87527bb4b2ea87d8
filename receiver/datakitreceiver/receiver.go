package datakitreceiver

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/httpserve"
	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/internal/sharedcomponent"
	"github.com/tracegate/tracegate/receiver/datakitreceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver"
)

// datakitReceiver serves Datakit's trace inputs for all signals (one server, shared by the
// traces, metrics and logs receivers the collector creates).
type datakitReceiver struct {
	cfg       *Config
	set       receiver.Settings
	obsrep    *receiverhelper.ObsReport
	telemetry *metadata.TelemetryBuilder
	slots     chan struct{} // max_concurrent_requests: one token per request being read or decoded

	next sharedcomponent.Signals // where each signal goes; nil for a signal no pipeline takes

	intake *ddtracereceiver.Intake // Datadog tracers' routes; nil without a traces pipeline
	server *httpserve.Server
	addr   string // where it listens, once started (tests use port 0)
}

func newReceiver(cfg *Config, set receiver.Settings) (*datakitReceiver, error) {
	obsrep, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID: set.ID, Transport: "http", ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &datakitReceiver{
		cfg: cfg, set: set, obsrep: obsrep, telemetry: tb,
		slots: make(chan struct{}, cfg.MaxConcurrentRequests),
	}, nil
}

// Start builds the routes of the signals that have a pipeline, listens and serves.
func (r *datakitReceiver) Start(ctx context.Context, host component.Host) error {
	if err := r.startIntake(); err != nil {
		return err
	}
	ln, err := r.cfg.ToListener(ctx)
	if err != nil {
		r.stopIntake()
		return fmt.Errorf("datakit receiver: listen on %s: %w", r.cfg.NetAddr.Endpoint, err)
	}
	r.server, err = httpserve.Start(ctx, host, r.set.TelemetrySettings, &r.cfg.ServerConfig, ln, r.routes())
	if err != nil {
		r.stopIntake()
		return err
	}
	r.addr = ln.Addr().String()
	r.set.Logger.Info("datakit receiver listening", zap.String("endpoint", r.addr))
	readiness.ReportListener(host, readiness.Listener{ID: r.set.ID, Addr: r.addr})
	return nil
}

// startIntake builds and starts the ddtrace intake when a traces pipeline takes this receiver.
func (r *datakitReceiver) startIntake() error {
	if r.next.Traces == nil {
		return nil
	}
	intake, err := ddtracereceiver.NewIntake(r.cfg.DDTrace, r.set, r.next.Traces)
	if err != nil {
		return err
	}
	r.intake = intake
	r.intake.Start()
	return nil
}

// Shutdown stops accepting requests and waits for the ones in flight, within ctx.
func (r *datakitReceiver) Shutdown(ctx context.Context) error {
	err := r.server.Shutdown(ctx)
	r.stopIntake()
	r.telemetry.Shutdown()
	return err
}

func (r *datakitReceiver) stopIntake() {
	if r.intake != nil {
		r.intake.Shutdown()
	}
}

// routes serves each route of a signal that has a pipeline; the Datadog tracers' routes and
// anything unknown go to the ddtrace intake. A route of a signal no pipeline takes answers 404,
// counted: the client is told, and the operator sees it.
func (r *datakitReceiver) routes() http.Handler {
	mux := http.NewServeMux()
	p := r.cfg.Paths
	traces := []string{p.Jaeger, p.ZipkinV1, p.ZipkinV2, p.OTLPPrefix + "/v1/traces"}
	if r.next.Traces != nil {
		mux.Handle(p.Jaeger, serveSignal(r, p.Jaeger, r.jaegerSignal()))
		mux.Handle(p.ZipkinV1, serveSignal(r, p.ZipkinV1, r.zipkinSignal(zipkinV1Formats)))
		mux.Handle(p.ZipkinV2, serveSignal(r, p.ZipkinV2, r.zipkinSignal(zipkinV2Formats)))
		mux.Handle(p.OTLPPrefix+"/v1/traces", serveSignal(r, p.OTLPPrefix+"/v1/traces", r.otlpTracesSignal()))
		mux.Handle("/", limitBody(r.intake.Handler(), r.cfg.DDTrace.MaxRequestBodySize))
	} else {
		for _, path := range append(traces, "/") { // "/": the Datadog tracers' routes
			mux.Handle(path, noPipeline(r, path, "traces"))
		}
	}
	if r.next.Metrics != nil {
		mux.Handle(p.OTLPPrefix+"/v1/metrics", serveSignal(r, p.OTLPPrefix+"/v1/metrics", r.otlpMetricsSignal()))
	} else {
		mux.Handle(p.OTLPPrefix+"/v1/metrics", noPipeline(r, p.OTLPPrefix+"/v1/metrics", "metrics"))
	}
	if r.next.Logs != nil {
		mux.Handle(p.OTLPPrefix+"/v1/logs", serveSignal(r, p.OTLPPrefix+"/v1/logs", r.otlpLogsSignal()))
	} else {
		mux.Handle(p.OTLPPrefix+"/v1/logs", noPipeline(r, p.OTLPPrefix+"/v1/logs", "logs"))
	}
	return mux
}

// noPipeline answers a route whose signal no pipeline takes: 404, counted under the route.
func noPipeline(r *datakitReceiver, path, signal string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Error(w, fmt.Sprintf("no %s pipeline takes the datakit receiver: %s is not served", signal, req.URL.Path), http.StatusNotFound)
		r.telemetry.ReceiverDatakitRequests.Add(req.Context(), 1, metric.WithAttributes(
			attribute.String("path", path), attribute.Int("http.response.status_code", http.StatusNotFound)))
	})
}

// limitBody applies the ddtrace section's body limit to the Datadog routes (the server's own
// limit is this receiver's).
func limitBody(h http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		req.Body = http.MaxBytesReader(w, req.Body, limit)
		h.ServeHTTP(w, req)
	})
}

// route is one of Paths' routes with its key in the configuration.
type route struct{ key, path string }

func (p Paths) routes() []route {
	return []route{
		{"jaeger", p.Jaeger},
		{"zipkin_v1", p.ZipkinV1},
		{"zipkin_v2", p.ZipkinV2},
		{"otlp_prefix", p.OTLPPrefix + "/v1/traces"},
	}
}

// NextConsumers are where the receiver's signals go.
func (r *datakitReceiver) NextConsumers() *sharedcomponent.Signals { return &r.next }
