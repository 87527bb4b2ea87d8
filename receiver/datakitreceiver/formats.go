// The decoders of the Jaeger, Zipkin and OpenTelemetry routes: the translators the stock receivers
// use (contrib's Jaeger and Zipkin, pdata's OTLP); Zipkin v2 JSON decoded by zipkinjson, which
// gives contrib's translator the spans encoding/json would.

package datakitreceiver

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/jaegertracing/jaeger-idl/thrift-gen/jaeger"
	jaegertranslator "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/jaeger"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin/zipkinv1"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin/zipkinv2"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/tracegate/tracegate/internal/zipkinjson"
)

// Media types and the formats they name (also the obsreport format).
const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/x-protobuf"
	mediaThrift   = "application/x-thrift"

	formatJSON   = "json"
	formatProto  = "protobuf"
	formatThrift = "thrift"
)

// formatsOf maps media types to formats; an absent or unknown type gets fallback ("" refuses it).
func formatsOf(types map[string]string, fallback string) func(string) (string, bool) {
	return func(mediaType string) (string, bool) {
		if f, ok := types[mediaType]; ok {
			return f, true
		}
		if mediaType == "" && fallback != "" {
			return fallback, true
		}
		return "", false
	}
}

// traceSignal is a traces route's signal with its decoder.
func (r *datakitReceiver) traceSignal(format func(string) (string, bool), decode func(string, []byte) (ptrace.Traces, error),
	reply func(http.ResponseWriter, string) int,
) signal[ptrace.Traces] {
	return signal[ptrace.Traces]{
		format: format, decode: decode, reply: reply,
		items:   ptrace.Traces.SpanCount,
		start:   r.obsrep.StartTracesOp,
		end:     r.obsrep.EndTracesOp,
		consume: func(ctx context.Context, td ptrace.Traces) error { return r.next.Traces.ConsumeTraces(ctx, td) },
	}
}

// accepted answers 202 with no body, as Jaeger's collector and Zipkin's server do.
func accepted(w http.ResponseWriter, _ string) int {
	w.WriteHeader(http.StatusAccepted)
	return http.StatusAccepted
}

// jaegerSignal takes Thrift binary batches whatever the media type says, as Datakit does
// (jaeger clients' HTTP senders post application/x-thrift).
func (r *datakitReceiver) jaegerSignal() signal[ptrace.Traces] {
	always := func(string) (string, bool) { return formatThrift, true }
	return r.traceSignal(always, func(_ string, body []byte) (ptrace.Traces, error) { return decodeJaeger(body) }, accepted)
}

// decodeJaeger reads one Thrift binary jaeger.Batch; no element may claim more than the body holds.
func decodeJaeger(body []byte) (ptrace.Traces, error) {
	// Read in place: the body is not copied, nor written again for a re-offer.
	mem := &thrift.TMemoryBuffer{Buffer: bytes.NewBuffer(body)}
	proto := thrift.NewTBinaryProtocolConf(mem, &thrift.TConfiguration{MaxMessageSize: int32(min(len(body), 1<<30))})
	batch := &jaeger.Batch{}
	if err := batch.Read(context.Background(), proto); err != nil {
		return ptrace.Traces{}, err
	}
	if batch.Process == nil {
		return ptrace.Traces{}, errors.New("the batch has no process")
	}
	return jaegertranslator.ThriftToTraces(batch)
}

var (
	zipkinV1Formats = formatsOf(map[string]string{mediaJSON: formatJSON, mediaThrift: formatThrift}, formatJSON)
	zipkinV2Formats = formatsOf(map[string]string{mediaJSON: formatJSON, mediaProtobuf: formatProto}, formatJSON)

	zipkinDecoders = map[string]ptrace.Unmarshaler{
		"v1/" + formatJSON:   zipkinv1.NewJSONTracesUnmarshaler(false),
		"v1/" + formatThrift: zipkinv1.NewThriftTracesUnmarshaler(),
		"v2/" + formatJSON:   zipkinjson.NewUnmarshaler(false),
		"v2/" + formatProto:  zipkinv2.NewProtobufTracesUnmarshaler(false, false),
	}
)

// zipkinSignal takes Zipkin spans in the formats of v1 or v2 (by formats), JSON when no media type
// is given.
func (r *datakitReceiver) zipkinSignal(formats func(string) (string, bool)) signal[ptrace.Traces] {
	version := "v2/"
	if _, ok := formats(mediaThrift); ok {
		version = "v1/"
	}
	decode := func(format string, body []byte) (ptrace.Traces, error) {
		return zipkinDecoders[version+format].UnmarshalTraces(body)
	}
	return r.traceSignal(formats, decode, accepted)
}

var otlpFormats = formatsOf(map[string]string{mediaJSON: formatJSON, mediaProtobuf: formatProto}, "")

// otlpReply answers with an empty export response in the request's encoding, as OTLP/HTTP asks.
func otlpReply(marshal func(format string) ([]byte, error)) func(http.ResponseWriter, string) int {
	return func(w http.ResponseWriter, format string) int {
		body, err := marshal(format)
		if err != nil { // an empty message always encodes
			w.WriteHeader(http.StatusOK)
			return http.StatusOK
		}
		if format == formatJSON {
			w.Header().Set("Content-Type", mediaJSON)
		} else {
			w.Header().Set("Content-Type", mediaProtobuf)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return http.StatusOK
	}
}

func (r *datakitReceiver) otlpTracesSignal() signal[ptrace.Traces] {
	decode := func(format string, body []byte) (ptrace.Traces, error) {
		req := ptraceotlp.NewExportRequest()
		if err := unmarshalOTLP(format, body, req.UnmarshalProto, req.UnmarshalJSON); err != nil {
			return ptrace.Traces{}, err
		}
		return req.Traces(), nil
	}
	reply := otlpReply(func(format string) ([]byte, error) {
		return marshalOTLP(format, ptraceotlp.NewExportResponse().MarshalProto, ptraceotlp.NewExportResponse().MarshalJSON)
	})
	return r.traceSignal(otlpFormats, decode, reply)
}

func (r *datakitReceiver) otlpMetricsSignal() signal[pmetric.Metrics] {
	return signal[pmetric.Metrics]{
		format: otlpFormats,
		decode: func(format string, body []byte) (pmetric.Metrics, error) {
			req := pmetricotlp.NewExportRequest()
			if err := unmarshalOTLP(format, body, req.UnmarshalProto, req.UnmarshalJSON); err != nil {
				return pmetric.Metrics{}, err
			}
			return req.Metrics(), nil
		},
		items:   pmetric.Metrics.DataPointCount,
		start:   r.obsrep.StartMetricsOp,
		end:     r.obsrep.EndMetricsOp,
		consume: func(ctx context.Context, md pmetric.Metrics) error { return r.next.Metrics.ConsumeMetrics(ctx, md) },
		reply: otlpReply(func(format string) ([]byte, error) {
			return marshalOTLP(format, pmetricotlp.NewExportResponse().MarshalProto, pmetricotlp.NewExportResponse().MarshalJSON)
		}),
	}
}

func (r *datakitReceiver) otlpLogsSignal() signal[plog.Logs] {
	return signal[plog.Logs]{
		format: otlpFormats,
		decode: func(format string, body []byte) (plog.Logs, error) {
			req := plogotlp.NewExportRequest()
			if err := unmarshalOTLP(format, body, req.UnmarshalProto, req.UnmarshalJSON); err != nil {
				return plog.Logs{}, err
			}
			return req.Logs(), nil
		},
		items:   plog.Logs.LogRecordCount,
		start:   r.obsrep.StartLogsOp,
		end:     r.obsrep.EndLogsOp,
		consume: func(ctx context.Context, ld plog.Logs) error { return r.next.Logs.ConsumeLogs(ctx, ld) },
		reply: otlpReply(func(format string) ([]byte, error) {
			return marshalOTLP(format, plogotlp.NewExportResponse().MarshalProto, plogotlp.NewExportResponse().MarshalJSON)
		}),
	}
}

func unmarshalOTLP(format string, body []byte, fromProto, fromJSON func([]byte) error) error {
	if format == formatJSON {
		return fromJSON(body)
	}
	return fromProto(body)
}

func marshalOTLP(format string, toProto, toJSON func() ([]byte, error)) ([]byte, error) {
	if format == formatJSON {
		return toJSON()
	}
	return toProto()
}
