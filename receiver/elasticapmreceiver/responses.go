// Replies as APM Server writes them (internal/beater/request and api/intake there): agents parse
// the error objects and log them, and drop a request's events on any status but 202.

package elasticapmreceiver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// result is the intake reply: the events accepted and up to maxErrors errors, with the status
// of the worst of them (APM Server lets the highest status win).
type result struct {
	status   int
	Accepted int          `json:"accepted"`
	Errors   []eventError `json:"errors,omitempty"`
}

// eventError is one error of an intake reply; document is the offending line, when there is one.
type eventError struct {
	Message  string `json:"message"`
	Document string `json:"document,omitempty"`
}

// maxErrors is APM Server's: apm-data keeps 5 event errors, plus one for the stream.
const maxErrors = 6

func newResult() *result { return &result{status: http.StatusAccepted} }

// add records an error answered with status; the highest status of a request is its reply's.
func (res *result) add(status int, msg, document string) {
	res.status = max(res.status, status)
	if len(res.Errors) < maxErrors {
		res.Errors = append(res.Errors, eventError{Message: msg, Document: document})
	}
}

// write sends res: 202 with no body, as APM Server (?verbose asks for the count), else the
// status with the result object.
func (res *result) write(w http.ResponseWriter, req *http.Request) {
	if res.status == http.StatusAccepted {
		if _, verbose := req.URL.Query()["verbose"]; !verbose {
			w.WriteHeader(http.StatusAccepted)
			return
		}
	}
	writeJSON(w, req, res.status, res)
}

// writeError sends a request-level error as APM Server does outside the event stream.
func writeError(w http.ResponseWriter, req *http.Request, status int, msg string) {
	writeJSON(w, req, status, map[string]string{"error": msg})
}

// writeJSON writes body as APM Server's WriteResult does: indented JSON for clients that accept
// JSON (agents send Accept: application/json), compact text otherwise; errors close the connection.
func writeJSON(w http.ResponseWriter, req *http.Request, status int, body any) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if accept := req.Header.Get("Accept"); strings.Contains(accept, "application/json") || strings.Contains(accept, "*/*") {
		h.Set("Content-Type", "application/json")
		enc.SetIndent("", "  ")
	} else {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	_ = enc.Encode(body) // maps and plain structs of strings and ints always encode
	if status >= http.StatusBadRequest {
		h.Set("Connection", "Close")
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// serverError answers what confighttp refuses before our handlers (authentication, an unreadable
// Content-Encoding) in APM Server's words.
func (r *intakeReceiver) serverError(w http.ResponseWriter, req *http.Request, msg string, status int) {
	switch {
	case status == http.StatusUnauthorized:
		if req.URL.Path == intakePath {
			r.telemetry.ReceiverElasticapmRequests.Add(req.Context(), 1, statusAttr(status))
			r.warnings.Warn("unauthorized", "otelcol.receiver.elasticapm.requests{http.response.status_code=401}",
				"intake requests refused: the agent's secret token or API key was missing or wrong", zap.String("error", msg))
		}
		writeError(w, req, status, "authentication failed: "+msg)
	case req.URL.Path == intakePath && status == http.StatusBadRequest:
		r.telemetry.ReceiverElasticapmRequests.Add(req.Context(), 1, statusAttr(status))
		res := newResult()
		res.add(status, "data decoding error: "+msg, "")
		res.write(w, req)
	default:
		writeError(w, req, status, msg)
	}
}
