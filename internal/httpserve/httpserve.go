// Package httpserve runs a receiver's confighttp server on a listener: the collector's
// middleware (TLS, auth, decompression, limits) around a handler, served in the background until
// Shutdown, with a serving error reported to the host.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
)

// Server is a started server.
type Server struct {
	srv *http.Server
	wg  sync.WaitGroup
}

// Start serves h on ln with cfg's server settings; on an error it closes ln.
func Start(ctx context.Context, host component.Host, set component.TelemetrySettings, cfg *confighttp.ServerConfig,
	ln net.Listener, h http.Handler, opts ...confighttp.ToServerOption,
) (*Server, error) {
	srv, err := cfg.ToServer(ctx, host.GetExtensions(), set, h, opts...)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	s := &Server{srv: srv}
	s.wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	})
	return s, nil
}

// Shutdown stops accepting requests and waits for the ones in flight, within ctx. A nil Server
// (never started) has nothing to stop.
func (s *Server) Shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	s.wg.Wait()
	return err
}
