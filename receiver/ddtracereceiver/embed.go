package ddtracereceiver

import (
	"net/http"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// NewDefaultConfig returns the receiver's default settings, for a component that serves the
// intake on a server of its own (NewIntake).
func NewDefaultConfig() *Config { return createDefaultConfig().(*Config) }

// Intake is the trace intake without a listener: every route, answer, limit and count of this
// receiver, for a component that serves it on its own server (the datakit receiver on Datakit's
// port). The server settings of its Config are not used.
type Intake struct{ r *ddReceiver }

// NewIntake builds the intake with cfg, counting under set's component id, handing traces to next.
func NewIntake(cfg *Config, set receiver.Settings, next consumer.Traces) (*Intake, error) {
	r, err := newReceiver(cfg, set, next)
	if err != nil {
		return nil, err
	}
	return &Intake{r: r}, nil
}

// Handler serves every route of the intake (/v0.3 to /v0.7, /info, ...); others get 404.
func (i *Intake) Handler() http.Handler { return i.r.handler() }

// Start starts what the intake runs in the background (the obfuscation cache).
func (i *Intake) Start() { i.r.obfuscator.Start() }

// Shutdown stops it; call it once the server stopped serving the handler.
func (i *Intake) Shutdown() {
	i.r.obfuscator.Shutdown()
	i.r.telemetry.Shutdown()
}
