package edotdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Where tracegate's conversion departs from EDOT's on purpose. expected turns EDOT's record (after
// the enrichment, with pre, the same record before it) into the record tracegate must give;
// ours is tracegate's record, read only where the expected value is the enrichment's own
// derivation from an input tracegate gives differently. Each rule names its reason.
func expected(edot, pre, ours record, global map[string]any) record {
	want := record{}
	for k, v := range edot {
		want[k] = v
	}
	moveEventContext(want, global)
	renameResource(want)
	if _, isSpan := want["flags"]; isSpan {
		expectSpan(want, pre, ours)
	}
	return want
}

// eventScoped are the attributes an agent sends per event: on the span or record, not the resource,
// so that a request's events share one resource. Kibana reads labels.* and user.* through the
// templates' passthrough objects, which resolve either place.
var eventScoped = []string{"user.", "user_agent.original", "client.", "source.", "network.", "labels.", "numeric_labels."}

func moveEventContext(want record, global map[string]any) {
	if _, isMetric := want["value"]; isMetric {
		return // a metricset's labels are its dimensions
	}
	for k, v := range want {
		name, onResource := strings.CutPrefix(k, "r.")
		if !onResource || !hasAnyPrefix(name, eventScoped) {
			continue
		}
		if label, ok := labelName(name); ok && fmt.Sprint(global[label]) == fmt.Sprint(v) {
			continue // the metadata's labels describe the process, unless the event set its own
		}
		delete(want, k)
		want["a."+name] = v
	}
}

func labelName(name string) (string, bool) {
	for _, p := range []string{"labels.", "numeric_labels."} {
		if l, ok := strings.CutPrefix(name, p); ok {
			return l, true
		}
	}
	return "", false
}

// renameResource: the conventions' current names (semantic conventions 1.40).
func renameResource(want record) {
	rename(want, "r.process.command_line", "r.process.command_args") // a list is command_args
	rename(want, "r.container.runtime", "r.container.runtime.name")
	if tag, ok := want["r.container.image.tags"].(string); ok {
		want["r.container.image.tags"] = []any{tag} // a list in the conventions
	}
	delete(want, "r.destination.ip") // the peer of one span, not of the process: server.address
}

func expectSpan(want, pre, ours record) {
	isTransaction := pre["a.processor.event"] == "transaction"
	// The parent's remoteness says transaction or span to the enrichment.
	want["flags"] = int64(0x100)
	if isTransaction && want["parent_id"] != "" {
		want["flags"] = int64(0x300)
	}
	// Kinds the agent did not send are inferred (unit-tested in internal/convert).
	if want["kind"] == "Unspecified" {
		want["kind"] = ours["kind"]
		if ours["kind"] == "Internal" && want["a.span.subtype"] == nil && ours["a.span.subtype"] == "internal" {
			want["a.span.subtype"] = "internal" // the enrichment's subtype of an internal span
		}
	}
	// span.id and span.name are the templates' aliases of the span's id and name; an id that
	// is not a readable span id is kept as the agent sent it.
	if !isTransaction && want["parent_id"] != "" {
		delete(want, "a.span.name")
		if pre["a.span.id"] == want["span_id"] {
			delete(want, "a.span.id")
		}
	}
	// A sampled transaction stands for 1/sample_rate; EDOT's receiver drops the rate, so the
	// enrichment writes 1.
	if n, ok := ours["a.transaction.representative_count"].(float64); isTransaction && ok && n != 1 {
		want["a.transaction.representative_count"] = n
	}
	if isTransaction && pre["a.transaction.sampled"] == nil {
		want["a.transaction.sampled"] = false // EDOT drops sampled=false, the enrichment then says true
	}
	if v, ok := want["a.messaging.destination.name"]; ok && v == "" {
		delete(want, "a.messaging.destination.name")
	}
	if !isTransaction {
		keepSpanAsSpan(want, pre)
	}
	expectDatabase(want, pre)
	expectDestination(want, pre)
	// The enrichment parses a span's user agent; EDOT's was on the resource.
	for _, k := range []string{"a.user_agent.name", "a.user_agent.version"} {
		if want["a.user_agent.original"] != nil && want[k] == nil {
			want[k] = ours[k]
		}
	}
	// APM Server stores a transaction's dropped spans statistics; EDOT keeps them only on a
	// metricset.
	if isTransaction && ours["a.transaction.dropped_spans_stats"] != nil && want["a.transaction.dropped_spans_stats"] == nil {
		want["a.transaction.dropped_spans_stats"] = ours["a.transaction.dropped_spans_stats"]
	}
}

// keepSpanAsSpan: a span event stays a span whatever kind the agent gave it (as APM Server stores
// it); EDOT's SERVER span got a transaction's fields from the enrichment too.
func keepSpanAsSpan(want, pre record) {
	if want["parent_id"] == "" {
		return
	}
	for k := range want {
		if strings.HasPrefix(k, "a.transaction.") && k != "a.transaction.id" && pre[k] == nil {
			delete(want, k)
		}
	}
}

// expectDatabase: db.system.name is the product, the agents' span subtype (postgresql), where
// EDOT wrote their db.type (sql) as db.system; what the enrichment derives from it follows.
func expectDatabase(want, pre record) {
	old, ok := want["a.db.system"]
	if !ok {
		return
	}
	delete(want, "a.db.system")
	system := old
	if want["a.span.type"] == "db" && want["a.span.subtype"] != nil && want["a.span.subtype"] != "" {
		system = want["a.span.subtype"]
	}
	want["a.db.system.name"] = system
	for _, k := range []string{"a.service.target.type", "a.span.destination.service.resource"} {
		if pre[k] == nil && want[k] == old {
			want[k] = system
		}
	}
}

// expectDestination: the peer of an exit span is the conventions' server.address and
// server.port, which the enrichment reads for an HTTP dependency's name.
func expectDestination(want, pre record) {
	// Agents still send the deprecated destination.service name and type, often empty (the Node.js
	// agent does): EDOT copies empty strings, ours leaves them out; Kibana reads only .resource.
	for _, k := range []string{"a.span.destination.service.name", "a.span.destination.service.type"} {
		if want[k] == "" {
			delete(want, k)
		}
	}
	addr, ok := want["a.destination.address"]
	if !ok {
		return
	}
	rename(want, "a.destination.address", "a.server.address")
	rename(want, "a.destination.port", "a.server.port")
	if want["a.service.target.type"] != "http" || want["a.url.full"] != nil || want["a.url.domain"] != nil {
		return
	}
	hostport := fmt.Sprint(addr)
	if port, ok := want["a.server.port"]; ok {
		hostport = fmt.Sprintf("%v:%v", addr, port)
	}
	if pre["a.service.target.name"] == nil {
		want["a.service.target.name"] = hostport
	}
	if pre["a.span.destination.service.resource"] == nil {
		want["a.span.destination.service.resource"] = hostport
	}
}

func rename(r record, from, to string) {
	if v, ok := r[from]; ok {
		delete(r, from)
		r[to] = v
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// globalLabels are the labels of a body's metadata line.
func globalLabels(body []byte) map[string]any {
	line, _, _ := bytes.Cut(body, []byte("\n"))
	var m struct {
		Metadata struct {
			Labels map[string]any `json:"labels"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(bytes.TrimSpace(line), &m) // no metadata: no global labels
	return m.Metadata.Labels
}
