package esstandin

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestInstalledTemplateMakesDataStream: on 8.13, ECS documents for traces-generic-default fail
// until an index template with a data_stream section matches; then they are accepted.
func TestInstalledTemplateMakesDataStream(t *testing.T) {
	s, hs := newTestServer(t, Options{Version: "8.13.4"})
	doc := `{"create":{"_index":"traces-generic-default"}}` + "\n" + `{"@timestamp":"2026-11-30T00:00:00Z","span":{"id":"aa"}}` + "\n"
	if items := bulkItems(t, hs.URL+"/_bulk?require_data_stream=true", doc); items[0].Status != 404 {
		t.Fatalf("without a template: %+v, want 404", items[0])
	}
	for _, c := range []struct{ method, path, body string }{
		{"PUT", "/_ilm/policy/traces-policy", `{"policy":{"phases":{"hot":{"actions":{"rollover":{"max_age":"7d"}}}}}}`},
		{"PUT", "/_component_template/traces-ecs@mappings", `{"template":{"mappings":{"properties":{"span":{"properties":{"id":{"type":"keyword"}}}}}},"version":3}`},
		{"PUT", "/_index_template/traces-ecs", `{"index_patterns":["traces-generic-*"],"data_stream":{},"priority":200,"version":3,"composed_of":["traces-ecs@mappings"]}`},
	} {
		if status, body := do(t, c.method, hs.URL+c.path, c.body); status != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, status, body)
		}
	}
	if items := bulkItems(t, hs.URL+"/_bulk?require_data_stream=true", doc); items[0].Status != 201 || !strings.HasPrefix(items[0].Index, ".ds-traces-generic-default-") {
		t.Fatalf("with the template: %+v, want 201 into a backing index", items[0])
	}
	status, body := do(t, "GET", hs.URL+"/_index_template/traces-ecs", "")
	if status != 200 || !strings.Contains(body, `"name":"traces-ecs"`) || !strings.Contains(body, `"version":3`) {
		t.Errorf("GET index template: %d %s", status, body)
	}
	status, body = do(t, "GET", hs.URL+"/_component_template/traces-ecs@mappings", "")
	if status != 200 || !strings.Contains(body, `"component_templates":[{"component_template"`) {
		t.Errorf("GET component template: %d %s", status, body)
	}
	status, body = do(t, "GET", hs.URL+"/_ilm/policy/traces-policy", "")
	if status != 200 || !strings.Contains(body, `"traces-policy":{"policy"`) {
		t.Errorf("GET ILM policy: %d %s", status, body)
	}
	if status, _ := do(t, "GET", hs.URL+"/_index_template/nothing", ""); status != 404 {
		t.Errorf("GET a missing template: %d, want 404", status)
	}
	if got := len(s.SetupRequests()); got != 7 {
		t.Errorf("%d setup requests recorded, want 7: %+v", got, s.SetupRequests())
	}
}

func TestSetupValidation(t *testing.T) {
	_, hs := newTestServer(t, Options{})
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"PUT", "/_index_template/x", `{"priority":1}`, 400},
		{"PUT", "/_index_template/x", `not json`, 400},
		{"PUT", "/_ilm/policy/x", `{"phases":{}}`, 400},
		{"DELETE", "/_component_template/missing", "", 404},
		{"PUT", "/_index_template", `{"index_patterns":["a"]}`, 405},
	} {
		if status, body := do(t, c.method, hs.URL+c.path, c.body); status != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, status, body, c.want)
		}
	}
}

// TestBefore812 checks that clusters older than 8.12 refuse require_data_stream, the reason the
// otel and ecs mappings need 8.12.
func TestBefore812(t *testing.T) {
	_, hs := newTestServer(t, Options{Version: "7.17.25"})
	doc := `{"create":{"_index":"tracegate-traces-2026.11.30"}}` + "\n" + `{"@timestamp":"2026-11-30T00:00:00Z"}` + "\n"
	resp, b := post(t, hs.URL+"/_bulk?require_data_stream=true", "application/json", []byte(doc), nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "unrecognized parameter: [require_data_stream]") {
		t.Errorf("7.17 with require_data_stream: %d %s", resp.StatusCode, b)
	}
	if items := bulkItems(t, hs.URL+"/_bulk", doc); items[0].Status != 201 || items[0].Index != "tracegate-traces-2026.11.30" {
		t.Errorf("7.17 plain index: %+v", items[0])
	}
}

// TestPlainIndicesHoldSpans: the plain mapping's daily indices count as spans, so WaitForSpans
// works for internal/estemplates/plain.yaml as for the data streams.
func TestPlainIndicesHoldSpans(t *testing.T) {
	s, hs := newTestServer(t, Options{Version: "8.5.3"})
	doc := `{"create":{"_index":"tracegate-traces-2026.11.30"}}` + "\n" +
		`{"@timestamp":"2026-11-30T00:00:00Z","TraceId":"01","SpanId":"02","Resource":{"service.name":"cart"}}` + "\n" +
		`{"create":{"_index":"other-2026.11.30"}}` + "\n" + `{"Resource":{"service.name":"not-a-span"}}` + "\n"
	for _, it := range bulkItems(t, hs.URL+"/_bulk", doc) {
		if it.Status != 201 {
			t.Fatalf("item %+v", it)
		}
	}
	if st := s.Stats(); st.SpansByService["cart"] != 1 || len(st.SpansByService) != 1 || st.Documents != 2 {
		t.Errorf("stats %+v: want one span, of cart, in two documents", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitForSpans(ctx, 1); err != nil {
		t.Error(err)
	}
}

// TestPipelinesAndWildcards: ingest pipelines are stored and answered by name, and a GET with a
// wildcard answers every matching template or pipeline, 404 when none matches.
func TestPipelinesAndWildcards(t *testing.T) {
	_, hs := newTestServer(t, Options{Version: "8.13.4"})
	for _, c := range []struct{ method, path, body string }{
		{"PUT", "/_ingest/pipeline/traces-apm-8.13.1", `{"processors":[{"set":{"field":"processor.event","value":"span"}}]}`},
		{"PUT", "/_index_template/traces-apm", `{"index_patterns":["traces-apm-*"],"data_stream":{},"priority":200}`},
		{"PUT", "/_index_template/logs-apm.error", `{"index_patterns":["logs-apm.error-*"],"data_stream":{},"priority":200}`},
	} {
		if status, body := do(t, c.method, hs.URL+c.path, c.body); status != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, status, body)
		}
	}
	for _, c := range []struct {
		path   string
		status int
		has    []string
	}{
		{"/_ingest/pipeline/traces-apm-8.13.1", 200, []string{`"traces-apm-8.13.1":{"processors"`}},
		{"/_ingest/pipeline/traces-apm*", 200, []string{`"traces-apm-8.13.1"`}},
		{"/_ingest/pipeline/metrics-apm*", 404, nil},
		{"/_index_template/*apm*", 200, []string{`"name":"traces-apm"`, `"name":"logs-apm.error"`}},
		{"/_index_template/traces-apm*", 200, []string{`"name":"traces-apm"`}},
		{"/_index_template/metrics-apm*", 404, nil},
	} {
		status, body := do(t, "GET", hs.URL+c.path, "")
		if status != c.status {
			t.Errorf("GET %s: %d %s, want %d", c.path, status, body, c.status)
		}
		for _, h := range c.has {
			if !strings.Contains(body, h) {
				t.Errorf("GET %s: %s lacks %s", c.path, body, h)
			}
		}
	}
}
