package elasticapmreceiver

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/elastic/apm-data/input/elasticapm"

	"github.com/tracegate/tracegate/internal/httpserve"
	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/internal/sharedcomponent"
	"github.com/tracegate/tracegate/internal/warnonce"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/convert"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadata"
)

// APM Server's paths.
const (
	intakePath      = "/intake/v2/events"
	agentConfigPath = "/config/v1/agents"
	rootPath        = "/"
)

// intakeReceiver serves APM Server's intake API for all signals (one server, shared by the
// traces, metrics and logs receivers the collector creates).
type intakeReceiver struct {
	cfg       *Config
	set       receiver.Settings
	obsrep    *receiverhelper.ObsReport
	telemetry *metadata.TelemetryBuilder
	decoder   *elasticapm.Processor
	converter *convert.Converter
	slots     chan struct{} // max_concurrent_requests: one token per request being decoded
	buffers   *bufferPool
	metadata  *metadataCache
	warnings  *warnonce.Warner
	info      map[string]any // the GET / body

	next sharedcomponent.Signals // where each signal goes; nil for a signal no pipeline takes

	server *httpserve.Server
	addr   string // where it listens, once started (tests use port 0)
}

func newReceiver(cfg *Config, set receiver.Settings) (*intakeReceiver, error) {
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
	return &intakeReceiver{
		cfg: cfg, set: set, obsrep: obsrep, telemetry: tb,
		// Our slots bound concurrency; apm-data's own semaphore is then never contended.
		decoder: elasticapm.NewProcessor(elasticapm.Config{
			Logger: set.Logger, MaxEventSize: cfg.MaxEventSize, Semaphore: unlimited{},
		}),
		converter: convert.NewConverter(set.Logger),
		slots:     make(chan struct{}, cfg.MaxConcurrentRequests),
		buffers:   newBufferPool(cfg.MaxEventSize),
		metadata:  newMetadataCache(),
		warnings:  warnonce.New(set.Logger),
		info:      serverInfo(cfg.ServerVersion, set.BuildInfo),
	}, nil
}

// Start listens and serves in the background.
func (r *intakeReceiver) Start(ctx context.Context, host component.Host) error {
	ln, err := r.cfg.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("elasticapm receiver: listen on %s: %w", r.cfg.NetAddr.Endpoint, err)
	}
	r.addr = ln.Addr().String()
	r.server, err = httpserve.Start(ctx, host, r.set.TelemetrySettings, &r.cfg.ServerConfig, ln, r.routes(),
		confighttp.WithErrorHandler(r.serverError))
	if err != nil {
		return err
	}
	r.set.Logger.Info("elasticapm receiver listening", zap.String("endpoint", r.addr))
	readiness.ReportListener(host, readiness.Listener{ID: r.set.ID, Addr: r.addr})
	return nil
}

// Shutdown stops accepting requests and waits for the ones in flight, within ctx.
func (r *intakeReceiver) Shutdown(ctx context.Context) error {
	err := r.server.Shutdown(ctx)
	r.telemetry.Shutdown()
	return err
}

func (r *intakeReceiver) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(intakePath, r.handleEvents)
	mux.HandleFunc(agentConfigPath, handleAgentConfig)
	mux.HandleFunc(rootPath, r.handleRoot)
	return mux
}

// unlimited is a semaphore that never waits (apm-data requires one).
type unlimited struct{}

func (unlimited) Acquire(context.Context, int64) error { return nil }
func (unlimited) TryAcquire(int64) bool                { return true }
func (unlimited) Release(int64)                        {}

// NextConsumers are where the receiver's signals go.
func (r *intakeReceiver) NextConsumers() *sharedcomponent.Signals { return &r.next }
