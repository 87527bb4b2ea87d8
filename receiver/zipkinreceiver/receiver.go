package zipkinreceiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin/zipkinv1"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin/zipkinv2"

	"github.com/tracegate/tracegate/internal/zipkinjson"
	"github.com/tracegate/tracegate/receiver/zipkinreceiver/internal/metadata"
)

// A request's format, as the contrib receiver names its transports in the receiver metrics
// (otelcol_receiver_accepted_spans{transport=...}), so dashboards read the same series.
type format struct {
	transport string
	decode    ptrace.Unmarshaler
}

type zipkinReceiver struct {
	cfg      *Config
	next     consumer.Traces
	settings receiver.Settings

	v1JSON, v1Thrift, v2JSON, v2Proto, v2ProtoDebug format
	obsreports                                      map[string]*receiverhelper.ObsReport
	// telemetry counts requests by reply: the receiver metrics count spans, and a body that
	// does not decode has none to count.
	telemetry    *metadata.TelemetryBuilder
	requestAttrs map[requestKey]metric.MeasurementOption

	server *http.Server
	served sync.WaitGroup
}

func newReceiver(cfg *Config, next consumer.Traces, set receiver.Settings) (*zipkinReceiver, error) {
	r := &zipkinReceiver{
		cfg: cfg, next: next, settings: set,
		v1JSON:       format{"http_v1_json", zipkinv1.NewJSONTracesUnmarshaler(cfg.ParseStringTags)},
		v1Thrift:     format{"http_v1_thrift", zipkinv1.NewThriftTracesUnmarshaler()},
		v2JSON:       format{"http_v2_json", zipkinjson.NewUnmarshaler(cfg.ParseStringTags)},
		v2Proto:      format{"http_v2_proto", zipkinv2.NewProtobufTracesUnmarshaler(false, cfg.ParseStringTags)},
		v2ProtoDebug: format{"http_v2_proto", zipkinv2.NewProtobufTracesUnmarshaler(true, cfg.ParseStringTags)},
		obsreports:   map[string]*receiverhelper.ObsReport{},
		requestAttrs: map[requestKey]metric.MeasurementOption{},
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	r.telemetry = tb
	for _, f := range []format{r.v1JSON, r.v1Thrift, r.v2JSON, r.v2Proto} {
		addRequestSets(r.requestAttrs, f.transport)
		obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
			ReceiverID: set.ID, Transport: f.transport, ReceiverCreateSettings: set,
		})
		if err != nil {
			return nil, err
		}
		r.obsreports[f.transport] = obs
	}
	return r, nil
}

// Start listens; the server decompresses bodies (Content-Encoding) and bounds their size.
func (r *zipkinReceiver) Start(ctx context.Context, host component.Host) error {
	if err := zipkinv2.ValidateFeatureGates(); err != nil {
		return err
	}
	server, err := r.cfg.ToServer(ctx, host.GetExtensions(), r.settings.TelemetrySettings, r)
	if err != nil {
		return err
	}
	listener, err := r.cfg.ToListener(ctx)
	if err != nil {
		return err
	}
	r.server = server
	r.served.Go(func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	})
	return nil
}

// Shutdown closes the server and waits for it.
func (r *zipkinReceiver) Shutdown(context.Context) error {
	var err error
	if r.server != nil {
		err = r.server.Close()
	}
	r.served.Wait()
	r.telemetry.Shutdown()
	return err
}

// formatOf: API v1 when the path says so (Thrift by media type, else JSON); v2 otherwise
// (protobuf by media type, debug when X-B3-Flags is 1; else JSON).
func (r *zipkinReceiver) formatOf(req *http.Request) format {
	mediaType := req.Header.Get("Content-Type")
	if strings.Contains(req.URL.Path, "api/v1/spans") {
		if mediaType == "application/x-thrift" {
			return r.v1Thrift
		}
		return r.v1JSON
	}
	if mediaType == "application/x-protobuf" {
		if req.Header.Get("X-B3-Flags") == "1" {
			return r.v2ProtoDebug
		}
		return r.v2Proto
	}
	return r.v2JSON
}

// ServeHTTP: 202 when the pipeline took the spans; 400 for a body that does not decode or spans
// the pipeline refuses for good; 429 with Retry-After when it refuses them for now (a full buffer).
func (r *zipkinReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	f := r.formatOf(req)
	status, msg := r.take(req, f)
	r.telemetry.ReceiverZipkinRequests.Add(req.Context(), 1, r.requestAttrs[requestKey{f.transport, status}])
	switch status {
	case http.StatusAccepted:
		w.WriteHeader(status)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		fallthrough
	default:
		http.Error(w, msg, status)
	}
}

// take reads, decodes and hands on a request's spans, and says how to answer.
func (r *zipkinReceiver) take(req *http.Request, f format) (status int, msg string) {
	obs := r.obsreports[f.transport]
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return http.StatusBadRequest, fmt.Sprintf("reading the body: %v", err)
	}
	td, err := f.decode.UnmarshalTraces(body)
	if err != nil {
		return http.StatusBadRequest, err.Error()
	}
	spans := td.SpanCount()
	ctx := obs.StartTracesOp(req.Context())
	err = r.next.ConsumeTraces(ctx, td)
	obs.EndTracesOp(ctx, dataFormat(f), spans, err)
	switch {
	case err == nil:
		return http.StatusAccepted, ""
	case consumererror.IsPermanent(err):
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusTooManyRequests, err.Error()
}

// requestKey is one series of the requests metric.
type requestKey struct {
	transport string
	status    int
}

// addRequestSets adds the requests metric's attribute sets of transport, one per reply take
// gives: built once, not per request.
func addRequestSets(sets map[requestKey]metric.MeasurementOption, transport string) {
	for _, status := range []int{http.StatusAccepted, http.StatusBadRequest, http.StatusTooManyRequests} {
		sets[requestKey{transport, status}] = metric.WithAttributeSet(attribute.NewSet(
			attribute.String("transport", transport), attribute.Int("http.response.status_code", status)))
	}
}

// dataFormat is the format attribute of the receiver metrics, as the contrib receiver sets it.
func dataFormat(f format) string {
	if strings.HasPrefix(f.transport, "http_v1") {
		return "zipkinV1"
	}
	return "zipkinV2"
}
