package tracesend

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"
	"sync"

	"github.com/openzipkin/zipkin-go"
	"github.com/openzipkin/zipkin-go/model"
	"github.com/openzipkin/zipkin-go/reporter"
	zipkinhttp "github.com/openzipkin/zipkin-go/reporter/http"
)

// teeReporter keeps a copy of every span it forwards, so the sender knows exactly what the zipkin-go
// tracer produced.
type teeReporter struct {
	next reporter.Reporter
	mu   sync.Mutex
	sent []model.SpanModel
}

func (r *teeReporter) Send(s model.SpanModel) {
	r.mu.Lock()
	r.sent = append(r.sent, s)
	r.mu.Unlock()
	r.next.Send(s)
}

func (r *teeReporter) Close() error { return r.next.Close() }

// sendZipkinJSON sends Zipkin v2 JSON with zipkin-go's HTTP reporter. The reporter logs failures
// instead of returning them, so its log is captured and any line in it is an error.
func sendZipkinJSON(_ context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	logger := log.New(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logBuf.Write(p)
	}), "", 0)
	tee := &teeReporter{next: zipkinhttp.NewReporter("http://"+ep.Zipkin+"/api/v2/spans",
		zipkinhttp.BatchSize(n+1), zipkinhttp.Logger(logger))}
	local, err := zipkin.NewEndpoint(service, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tracer, err := zipkin.NewTracer(tee, zipkin.WithLocalEndpoint(local), zipkin.WithTraceID128Bit(true))
	if err != nil {
		return nil, err
	}
	p := plan(n)
	spans := make([]zipkin.Span, len(p))
	for i, ps := range p {
		opts := []zipkin.SpanOption{}
		switch ps.kind {
		case "Server":
			opts = append(opts, zipkin.Kind(model.Server))
		case "Client":
			opts = append(opts, zipkin.Kind(model.Client))
		}
		if ps.parent >= 0 {
			opts = append(opts, zipkin.Parent(spans[ps.parent].Context()))
		}
		span := tracer.StartSpan(ps.name, opts...)
		if ps.kind == "Internal" {
			// Zipkin has no internal kind; the receiver reads it from this tag.
			span.Tag("span.kind", "internal")
		}
		for k, v := range ps.attrs {
			span.Tag(k, fmt.Sprint(v))
		}
		if ps.failed {
			zipkin.TagError.Set(span, "true")
		}
		span.Finish()
		spans[i] = span
	}
	if err := tee.Close(); err != nil { // flushes the batch
		return nil, err
	}
	logMu.Lock()
	defer logMu.Unlock()
	if logBuf.Len() > 0 {
		return nil, fmt.Errorf("zipkin reporter: %s", bytes.TrimSpace(logBuf.Bytes()))
	}
	var sent []Span
	for i, s := range tee.sent {
		// Spans are reported when they finish, in plan order here.
		parent := ""
		if s.ParentID != nil {
			parent = s.ParentID.String()
		}
		attrs := map[string]any{}
		for k, v := range p[i].attrs {
			attrs[k] = fmt.Sprint(v) // Zipkin tags are strings
		}
		sent = append(sent, Span{
			TraceID:      s.TraceID.String(),
			SpanID:       s.ID.String(),
			ParentSpanID: parent,
			Name:         strings.ToLower(s.Name), // zipkin-go lowercases names on the wire, per the Zipkin v2 model
			Kind:         p[i].kind,
			StatusCode:   statusName(p[i].failed),
			Service:      service,
			Attributes:   attrs,
		})
	}
	return sent, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
