package ddtracereceiver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"

	"github.com/tracegate/tracegate/internal/httpserve"
	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/internal/warnonce"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/chunkfilter"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/obfuscation"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/ratesampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// ddReceiver serves the trace intake.
type ddReceiver struct {
	cfg        *Config
	set        receiver.Settings
	next       consumer.Traces
	obsrep     *receiverhelper.ObsReport
	telemetry  *metadata.TelemetryBuilder
	translator *translator.Translator
	obfuscator *obfuscation.Obfuscator
	filter     *chunkfilter.Filter // ignore_resources, filter_tags; nil when none is set
	info       []byte              // the /info body
	state      string              // Datadog-Agent-State: SHA-256 of info
	slots      chan struct{}       // max_concurrent_requests: one token per request being read or decoded
	// decodeMemory is the decode_memory_mib budget, in bytes, shared by the requests in progress.
	decodeMemory *semaphore.Weighted
	bodies       bodyBuffers
	warnings     *warnonce.Warner

	rates *ratesampler.Sampler // rate_by_service; nil when off
	clock func() time.Time     // rate_by_service's clock; nil: time.Now

	server *httpserve.Server
}

func newReceiver(cfg *Config, set receiver.Settings, next consumer.Traces) (*ddReceiver, error) {
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
	info, state, err := buildInfo(cfg)
	if err != nil {
		return nil, err
	}
	filter, err := chunkfilter.New(cfg.Filters)
	if err != nil {
		return nil, err
	}
	return &ddReceiver{
		cfg: cfg, set: set, next: next, obsrep: obsrep, telemetry: tb,
		translator: translator.New(translator.Options{
			Mapping: cfg.Mapping, TraceIDCacheSize: cfg.TraceIDCacheSize, StatusOKWithoutError: cfg.statusOKWithoutError(),
		}),
		info: info, state: state,
		slots:        make(chan struct{}, cfg.MaxConcurrentRequests),
		decodeMemory: semaphore.NewWeighted(cfg.DecodeMemoryMiB << 20),
		bodies:       bodyBuffers{maxBody: cfg.MaxRequestBodySize},
		warnings:     warnonce.New(set.Logger),
		obfuscator:   obfuscation.New(cfg.Obfuscation),
		filter:       filter,
		rates:        newRateSampler(cfg),
	}, nil
}

// socketMode is the Datadog Agent's mode for its trace socket.
const socketMode os.FileMode = 0o722

// Start listens and serves in the background.
func (r *ddReceiver) Start(ctx context.Context, host component.Host) error {
	if r.cfg.NetAddr.Transport == confignet.TransportTypeUnix {
		if err := removeStaleSocket(r.cfg.NetAddr.Endpoint); err != nil {
			return err
		}
	}
	ln, err := r.cfg.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("ddtrace receiver: listen on %s: %w", r.cfg.NetAddr.Endpoint, err)
	}
	if r.cfg.NetAddr.Transport == confignet.TransportTypeUnix {
		// Connecting to a Unix socket takes write permission on it, and the umask leaves others
		// without: an application running as another user (a shared hostPath in Kubernetes) would
		// get EACCES, and tracers that find the socket do not fall back to TCP. The agent makes it
		// writable by everyone, readable only by its owner.
		if err := os.Chmod(r.cfg.NetAddr.Endpoint, socketMode); err != nil {
			_ = ln.Close()
			return fmt.Errorf("ddtrace receiver: set the permissions of %s: %w", r.cfg.NetAddr.Endpoint, err)
		}
	}
	r.obfuscator.Start()
	r.server, err = httpserve.Start(ctx, host, r.set.TelemetrySettings, &r.cfg.ServerConfig, ln, r.handler())
	if err != nil {
		r.obfuscator.Shutdown()
		return err
	}
	addr := ln.Addr().String() // the port bound where the configuration says 0
	r.set.Logger.Info("ddtrace receiver listening", zap.String("endpoint", addr))
	readiness.ReportListener(host, readiness.Listener{ID: r.set.ID, Addr: addr})
	return nil
}

// Shutdown stops accepting requests and waits for the ones in flight, within ctx.
func (r *ddReceiver) Shutdown(ctx context.Context) error {
	err := r.server.Shutdown(ctx)
	r.obfuscator.Shutdown()
	r.telemetry.Shutdown()
	return err
}

// removeStaleSocket deletes a socket file left by a previous run, so a restart can bind; anything
// that is not a socket is left alone and the listen fails with a clear error.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("ddtrace receiver: %s exists and is not a socket", path)
	}
	if c, err := net.Dial("unix", path); err == nil {
		_ = c.Close()
		return fmt.Errorf("ddtrace receiver: another process serves %s", path)
	}
	return os.Remove(path)
}
