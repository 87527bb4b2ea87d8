// rate_by_service: counting what tracers send and answering with the rates they should sample at.

package ddtracereceiver

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/ratesampler"
)

// ratesVersionHeader carries the version of the rates a tracer holds, and of the ones in the reply.
const ratesVersionHeader = "Datadog-Rates-Payload-Version"

// unchangedRates is the body for a tracer that already holds the current rates, as the agent's.
var unchangedRates = []byte("{}")

// newRateSampler is the sampler of rate_by_service, nil when it is off.
func newRateSampler(cfg *Config) *ratesampler.Sampler {
	if !cfg.RateByService.Enabled {
		return nil
	}
	return ratesampler.New(cfg.RateByService)
}

// now is the time of a request for rate_by_service; tests set r.clock.
func (r *ddReceiver) now() time.Time {
	if r.clock != nil {
		return r.clock()
	}
	return time.Now()
}

// countRates counts a request's chunks for rate_by_service, before anything is sampled away.
// Chunks forwarded by another agent were sampled by it, and their tracers never see our rates.
func (r *ddReceiver) countRates(ctx context.Context, ep endpoint, req *http.Request, payloads []payload.Payload) {
	if r.rates == nil || ep.forwarded {
		return
	}
	res := r.rates.Count(r.now(), payloads, headerCount(req, "Datadog-Client-Dropped-P0-Traces"))
	if res.Untracked > 0 {
		r.telemetry.ReceiverDdtraceRateByServiceUntracked.Add(ctx, int64(res.Untracked))
		r.warnings.Warn("rate_by_service/untracked", "otelcol.receiver.ddtrace.rate_by_service.untracked",
			"more (service, env) pairs than rate_by_service.max_services: the others get the default rate",
			zap.Int("max_services", r.cfg.RateByService.MaxServices))
	}
	if res.Rotated {
		r.telemetry.ReceiverDdtraceRateByServiceServices.Record(ctx, int64(res.Services))
	}
	if res.Changed {
		r.telemetry.ReceiverDdtraceRateByServiceUpdates.Add(ctx, 1)
	}
}

// rateReplyBody is the body of a rates route's reply. With rate_by_service on it answers as the
// agent: a tracer that sent Datadog-Rates-Payload-Version gets the current version in the same
// header, and {} instead of the table when it already holds that version.
func rateReplyBody(w http.ResponseWriter, req *http.Request, rates *ratesampler.Sampler) []byte {
	if rates == nil {
		return rateBody
	}
	cur := rates.Reply()
	held := req.Header.Get(ratesVersionHeader)
	if held == "" {
		return cur.Body
	}
	w.Header().Set(ratesVersionHeader, cur.Version)
	if held == cur.Version {
		return unchangedRates
	}
	return cur.Body
}
