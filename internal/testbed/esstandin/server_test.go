package esstandin

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// exporterFilter is the filter_path the contrib elasticsearch exporter sends on every bulk.
const exporterFilter = "items.*._index,items.*.status,items.*.failure_store,items.*.error.type,items.*.error.reason"

func newTestServer(t *testing.T, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	opts.KeepDocuments = true
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.catalog.today = func() string { return "2026.11.30" }
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, hs
}

type bulkItemResult struct {
	Index  string `json:"_index"`
	ID     string `json:"_id"`
	Status int    `json:"status"`
	Error  struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	} `json:"error"`
}

func post(t *testing.T, url, contentType string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("X-Elastic-Product"); got != "Elasticsearch" {
		t.Errorf("X-Elastic-Product = %q on %s", got, resp.Status)
	}
	return resp, b
}

// bulkItems posts body and decodes the positional items of a 200 response.
func bulkItems(t *testing.T, url, body string) []bulkItemResult {
	t.Helper()
	resp, b := post(t, url, "application/x-ndjson", []byte(body), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var r struct {
		Items []map[string]bulkItemResult `json:"items"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var out []bulkItemResult
	for _, it := range r.Items {
		if len(it) != 1 {
			t.Fatalf("item with %d actions: %s", len(it), b)
		}
		for _, v := range it {
			out = append(out, v)
		}
	}
	return out
}

// bulkActions returns the key each item of a bulk response is reported under.
func bulkActions(t *testing.T, url, body string) []string {
	t.Helper()
	_, b := post(t, url, "application/x-ndjson", []byte(body), nil)
	var r struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var out []string
	for _, it := range r.Items {
		for k := range it {
			out = append(out, k)
		}
	}
	return out
}

func TestBulkItems(t *testing.T) {
	const spanDoc = `{"@timestamp":"1700000000000.0","span_id":"0405","resource":{"attributes":{"service.name":"cart"}}}`
	tests := []struct {
		name       string
		version    string
		query      string
		body       string
		wantStatus []int
		wantIndex  []string
		wantError  []string
		wantAction []string // the key each item is reported under; nil: not checked
	}{
		{
			name: "create into an otel data stream", query: "?require_data_stream=true",
			body:       `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" + spanDoc + "\n",
			wantStatus: []int{201}, wantIndex: []string{".ds-traces-generic.otel-default-2026.11.30-000001"}, wantError: []string{""},
		},
		{
			name: "no template matches an ecs data stream", query: "?require_data_stream=true",
			body:       `{"create":{"_index":"traces-generic-default"}}` + "\n" + spanDoc + "\n",
			wantStatus: []int{404}, wantIndex: []string{"traces-generic-default"}, wantError: []string{"index_not_found_exception"},
		},
		{
			name: "8.13 has no otel templates", version: "8.13.4", query: "?require_data_stream=true",
			body:       `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" + spanDoc + "\n",
			wantStatus: []int{404}, wantIndex: []string{"traces-generic.otel-default"}, wantError: []string{"index_not_found_exception"},
		},
		{
			name:       "index op into a data stream",
			body:       `{"index":{"_index":"logs-app-default"}}` + "\n" + spanDoc + "\n",
			wantStatus: []int{400}, wantIndex: []string{".ds-logs-app-default-2026.11.30-000001"}, wantError: []string{"illegal_argument_exception"},
		},
		{
			name:       "index op with op_type create into a data stream",
			body:       `{"index":{"_index":"logs-app-default","op_type":"create"}}` + "\n" + spanDoc + "\n",
			wantStatus: []int{201}, wantIndex: []string{".ds-logs-app-default-2026.11.30-000001"}, wantError: []string{""},
			wantAction: []string{"create"},
		},
		{
			name:       "op_type is case-insensitive",
			body:       `{"index":{"_index":"logs-app-default","op_type":"CREATE"}}` + "\n" + spanDoc + "\n",
			wantStatus: []int{201}, wantIndex: []string{".ds-logs-app-default-2026.11.30-000001"}, wantError: []string{""},
			wantAction: []string{"create"},
		},
		{
			name:       "a pipeline that does not exist",
			body:       `{"create":{"_index":"plain","pipeline":"geoip"}}` + "\n" + `{"a":1}` + "\n" + `{"create":{"_index":"plain","pipeline":"_none"}}` + "\n" + `{"a":1}` + "\n",
			wantStatus: []int{400, 201}, wantIndex: []string{"plain", "plain"}, wantError: []string{"illegal_argument_exception", ""},
		},
		{
			name: "the request's pipeline applies to every item", query: "?pipeline=geoip",
			body:       `{"create":{"_index":"plain"}}` + "\n" + `{"a":1}` + "\n",
			wantStatus: []int{400}, wantIndex: []string{"plain"}, wantError: []string{"illegal_argument_exception"},
		},
		{
			name:       "data stream document without @timestamp",
			body:       `{"create":{"_index":"logs-app-default"}}` + "\n" + `{"a":1}` + "\n",
			wantStatus: []int{400}, wantIndex: []string{".ds-logs-app-default-2026.11.30-000001"}, wantError: []string{"document_parsing_exception"},
		},
		{
			name: "before 8.8 the error is a mapper_parsing_exception", version: "8.5.3",
			body:       `{"create":{"_index":"plain"}}` + "\n" + `{"a":` + "\n",
			wantStatus: []int{400}, wantIndex: []string{"plain"}, wantError: []string{"mapper_parsing_exception"},
		},
		{
			name:       "source is not json, others still indexed",
			body:       `{"create":{"_index":"plain"}}` + "\n" + `{"a":` + "\n" + `{"create":{"_index":"plain"}}` + "\n" + `{"a":1}` + "\n",
			wantStatus: []int{400, 201}, wantIndex: []string{"plain", "plain"}, wantError: []string{"document_parsing_exception", ""},
		},
		{
			name:  "index from the path, plain index, index op",
			query: "", body: `{"index":{}}` + "\n" + `{"a":1}` + "\n",
			wantStatus: []int{201}, wantIndex: []string{"frompath"}, wantError: []string{""},
		},
		{
			name:       "explicit id twice",
			body:       `{"create":{"_index":"plain","_id":"x"}}` + "\n" + `{"a":1}` + "\n" + `{"create":{"_index":"plain","_id":"x"}}` + "\n" + `{"a":2}` + "\n",
			wantStatus: []int{201, 409}, wantIndex: []string{"plain", "plain"}, wantError: []string{"", "version_conflict_engine_exception"},
		},
		{
			name:       "index with an existing id overwrites it",
			body:       `{"index":{"_index":"plain","_id":"x"}}` + "\n" + `{"a":1}` + "\n" + `{"index":{"_index":"plain","_id":"x"}}` + "\n" + `{"a":2}` + "\n" + `{"create":{"_index":"plain","_id":"x"}}` + "\n" + `{"a":3}` + "\n",
			wantStatus: []int{201, 200, 409}, wantIndex: []string{"plain", "plain", "plain"}, wantError: []string{"", "", "version_conflict_engine_exception"},
		},
		{
			name: "time series: an identical document is a duplicate, other values of the same group too",
			body: `{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + tsDoc(`{"cpu":1}`, "a") + "\n" +
				`{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + tsDoc(`{"cpu":1}`, "a") + "\n" +
				`{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + tsDoc(`{"cpu":2}`, "a") + "\n",
			wantStatus: []int{201, 409, 409}, wantError: []string{"", "version_conflict_engine_exception", "version_conflict_engine_exception"},
			wantIndex: []string{tsIndex, tsIndex, tsIndex},
		},
		{
			name: "time series: other dimensions or another grouping are other documents",
			body: `{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + tsDoc(`{"cpu":1}`, "a") + "\n" +
				`{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + tsDoc(`{"cpu":1}`, "b") + "\n" +
				`{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + strings.Replace(tsDoc(`{"cpu":1,"mem":2}`, "a"), `"h1"`, `"h12"`, 1) + "\n",
			wantStatus: []int{201, 201, 201}, wantError: []string{"", "", ""},
			wantIndex: []string{tsIndex, tsIndex, tsIndex},
		},
		{
			// _doc_count (a metadata field) and start_timestamp (date_nanos) are no dimensions of
			// Elasticsearch's otel metrics mappings: a document that differs only in them is the
			// same time series point. The connector's aggregated sets (metrics-<set>.<interval>.otel-*)
			// are time-series data streams like every metrics-*.otel-* one.
			name: "time series: _doc_count and start_timestamp are no dimensions; aggregated sets too",
			body: `{"create":{"_index":"metrics-service_transaction.1m.otel-default"}}` + "\n" + tsDocCount(`{"d":{"sum":2,"value_count":1}}`, 1, "2026-11-29T23:59:00Z") + "\n" +
				`{"create":{"_index":"metrics-service_transaction.1m.otel-default"}}` + "\n" + tsDocCount(`{"d":{"sum":2,"value_count":1}}`, 1, "2026-11-29T23:59:00Z") + "\n" +
				`{"create":{"_index":"metrics-service_transaction.1m.otel-default"}}` + "\n" + tsDocCount(`{"d":{"sum":5,"value_count":2}}`, 2, "2026-11-29T23:58:00Z") + "\n",
			wantStatus: []int{201, 409, 409}, wantError: []string{"", "version_conflict_engine_exception", "version_conflict_engine_exception"},
			wantIndex: []string{aggIndex, aggIndex, aggIndex},
		},
		{
			name:       "time series: a client's _id is refused",
			body:       `{"create":{"_index":"metrics-app.otel-default","_id":"mine"}}` + "\n" + tsDoc(`{"cpu":1}`, "a") + "\n",
			wantStatus: []int{400}, wantError: []string{"illegal_argument_exception"}, wantIndex: []string{tsIndex},
		},
		{
			name: "not a time series before 8.16 (no otel templates): identical documents are two", version: "8.15.0",
			body: `{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + tsDoc(`{"cpu":1}`, "a") + "\n" +
				`{"create":{"_index":"metrics-app.otel-default"}}` + "\n" + tsDoc(`{"cpu":1}`, "a") + "\n",
			wantStatus: []int{201, 201}, wantError: []string{"", ""},
			wantIndex: []string{tsIndex, tsIndex},
		},
		{
			name: "duplicate keys in a source, at any depth",
			body: `{"create":{"_index":"plain"}}` + "\n" + `{"a":{"b":1,"b":2}}` + "\n" +
				`{"create":{"_index":"plain"}}` + "\n" + `{"a":{"b":1},"c":[{"b":1},{"b":2}]}` + "\n",
			wantStatus: []int{400, 201}, wantIndex: []string{"plain", "plain"}, wantError: []string{"document_parsing_exception", ""},
		},
		{
			name:       "a blank line after an action is its (empty) source; blank lines between actions are skipped",
			body:       "\n" + `{"create":{"_index":"plain"}}` + "\n\n\n" + `{"create":{"_index":"plain"}}` + "\n" + `{"a":1}` + "\n",
			wantStatus: []int{400, 201}, wantIndex: []string{"plain", "plain"}, wantError: []string{"document_parsing_exception", ""},
		},
		{
			name:       "invalid index name",
			body:       `{"create":{"_index":"Traces"}}` + "\n" + `{"a":1}` + "\n",
			wantStatus: []int{400}, wantIndex: []string{"Traces"}, wantError: []string{"invalid_index_name_exception"},
		},
		{
			name:       "delete is not implemented",
			body:       `{"delete":{"_index":"plain","_id":"x"}}` + "\n",
			wantStatus: []int{400}, wantIndex: []string{"plain"}, wantError: []string{"illegal_argument_exception"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, hs := newTestServer(t, Options{Version: tt.version})
			url := hs.URL + "/_bulk"
			if strings.Contains(tt.name, "from the path") {
				url = hs.URL + "/frompath/_bulk"
			}
			items := bulkItems(t, url+tt.query, tt.body)
			if tt.wantAction != nil {
				if got := bulkActions(t, url+tt.query, tt.body); !slices.Equal(got, tt.wantAction) {
					t.Errorf("items reported under %v, want %v", got, tt.wantAction)
				}
			}
			if len(items) != len(tt.wantStatus) {
				t.Fatalf("%d items, want %d", len(items), len(tt.wantStatus))
			}
			for i, it := range items {
				if it.Status != tt.wantStatus[i] || it.Index != tt.wantIndex[i] || it.Error.Type != tt.wantError[i] {
					t.Errorf("item %d = {status %d, index %q, error %q}, want {%d, %q, %q}",
						i, it.Status, it.Index, it.Error.Type, tt.wantStatus[i], tt.wantIndex[i], tt.wantError[i])
				}
				if it.Error.Type != "" && it.Error.Reason == "" {
					t.Errorf("item %d: error without a reason", i)
				}
			}
		})
	}
}

func TestBulkRequestErrors(t *testing.T) {
	big := strings.Repeat(`{"create":{"_index":"plain"}}`+"\n"+`{"a":1}`+"\n", 100)
	tests := []struct {
		name        string
		contentType string
		body        string
		header      map[string]string
		wantStatus  int
		wantType    string
	}{
		{"empty body", "application/json", "", nil, 400, "action_request_validation_exception"},
		{"no final newline", "application/json", `{"create":{"_index":"a"}}` + "\n" + `{}`, nil, 400, "illegal_argument_exception"},
		{"action line not json", "application/json", "nope\n{}\n", nil, 400, "x_content_parse_exception"},
		{"unknown action", "application/json", `{"upsert":{"_index":"a"}}` + "\n{}\n", nil, 400, "illegal_argument_exception"},
		{"two actions on a line", "application/json", `{"create":{},"index":{}}` + "\n{}\n", nil, 400, "illegal_argument_exception"},
		{"unknown parameter", "application/json", `{"create":{"_index":"a","color":"red"}}` + "\n{}\n", nil, 400, "illegal_argument_exception"},
		{"duplicate key in an action line", "application/json", `{"create":{"_index":"a","_index":"b"}}` + "\n{}\n", nil, 400, "x_content_parse_exception"},
		{"duplicate _id in an action line", "application/json", `{"create":{"_index":"a","_id":"x","_id":"y"}}` + "\n{}\n", nil, 400, "x_content_parse_exception"},
		{"an _id beside an unknown key", "application/json", `{"create":{"_index":"a","hue":1,"_id":"x"}}` + "\n{}\n", nil, 400, "illegal_argument_exception"},
		{"unknown op_type", "application/json", `{"index":{"_index":"a","op_type":"upsert"}}` + "\n{}\n", nil, 400, "illegal_argument_exception"},
		{"no index anywhere", "application/json", `{"create":{}}` + "\n{}\n", nil, 400, "action_request_validation_exception"},
		{"missing source", "application/json", `{"create":{"_index":"a"}}` + "\n", nil, 400, "action_request_validation_exception"},
		{"no content type", "", big, nil, 406, "media_type_header_exception"},
		{"wrong content type", "text/plain", big, nil, 406, "media_type_header_exception"},
		{"bad gzip", "application/json", big, map[string]string{"Content-Encoding": "gzip"}, 400, "illegal_argument_exception"},
		{"unknown encoding", "application/json", big, map[string]string{"Content-Encoding": "br"}, 400, "illegal_argument_exception"},
		{"over max content length", "application/json", big, nil, 413, "http_content_too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, hs := newTestServer(t, Options{MaxContentLength: int64(len(big) - 1)})
			resp, b := post(t, hs.URL+"/_bulk", tt.contentType, []byte(tt.body), tt.header)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			var e struct {
				Error struct {
					Type      string `json:"type"`
					Reason    string `json:"reason"`
					RootCause []any  `json:"root_cause"`
				} `json:"error"`
				Status int `json:"status"`
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			if e.Error.Type != tt.wantType || e.Status != tt.wantStatus || e.Error.Reason == "" || len(e.Error.RootCause) != 1 {
				t.Errorf("error body %s, want type %s", b, tt.wantType)
			}
			if st := s.Stats(); st.Documents != 0 || st.FailedRequests != 1 {
				t.Errorf("stats %+v, want 0 documents and 1 failed request", st)
			}
		})
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestExporterShapedRequest sends what the contrib exporter sends (gzip, filter_path,
// require_data_stream) and checks the exact filtered response and what was recorded.
func TestExporterShapedRequest(t *testing.T) {
	s, hs := newTestServer(t, Options{})
	body := `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" +
		`{"@timestamp":"1.0","trace_id":"01","span_id":"aa","resource":{"attributes":{"service.name":"cart"}}}` + "\n" +
		`{"create":{"_index":"logs-generic.otel-default"}}` + "\n" +
		`{"@timestamp":"1.0","span_id":"aa","event_name":"exception","resource":{"attributes":{"service.name":"cart"}}}` + "\n" +
		`{"create":{"_index":"traces-generic-default"}}` + "\n" +
		`{"@timestamp":"1","span":{"id":"bb"},"service":{"name":"shop"}}` + "\n"
	resp, b := post(t, hs.URL+"/_bulk?require_data_stream=true&filter_path="+exporterFilter, "application/json",
		gzipped(t, body), map[string]string{"Content-Encoding": "gzip"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	want := `{"items":[` +
		`{"create":{"_index":".ds-traces-generic.otel-default-2026.11.30-000001","status":201}},` +
		`{"create":{"_index":".ds-logs-generic.otel-default-2026.11.30-000001","status":201}},` +
		`{"create":{"_index":"traces-generic-default","status":404,"error":{"type":"index_not_found_exception","reason":"no such index [traces-generic-default] and [require_data_stream] request flag is [true] and [traces-generic-default] is not a data stream"}}}]}`
	if string(b) != want {
		t.Errorf("response\n got %s\nwant %s", b, want)
	}
	st := s.Stats()
	if st.Documents != 2 || st.ByIndex["traces-generic.otel-default"] != 1 || st.ByIndex["logs-generic.otel-default"] != 1 ||
		st.SpansByService["cart"] != 1 || st.RejectedItems != 1 || st.RejectedReasons["index_not_found_exception"] != 1 || st.DuplicateSpans != 0 {
		t.Errorf("stats %+v", st)
	}
	docs := s.Documents()
	if len(docs) != 2 || docs[0].SpanID != "aa" || docs[0].Index != "traces-generic.otel-default" {
		t.Errorf("documents %+v", docs)
	}
}

func TestDuplicatesAndWait(t *testing.T) {
	s, hs := newTestServer(t, Options{})
	doc := `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" + `{"@timestamp":"1.0","span_id":"aa"}` + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.WaitForDocuments(ctx, 3) }()
	for range 3 {
		bulkItems(t, hs.URL+"/_bulk", doc)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Documents != 3 || st.DuplicateSpans != 2 {
		t.Errorf("stats %+v, want 3 documents and 2 duplicates", st)
	}
	s.Reset()
	if st := s.Stats(); st.Documents != 0 || st.DuplicateSpans != 0 {
		t.Errorf("after reset: %+v", st)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if err := s.WaitForDocuments(short, 1); err == nil {
		t.Error("WaitForDocuments returned nil with no documents")
	}
}

func TestInjectedFaults(t *testing.T) {
	doc := `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" + `{"@timestamp":"1.0","span_id":"aa"}` + "\n"
	t.Run("items 429", func(t *testing.T) {
		s, hs := newTestServer(t, Options{})
		if err := s.SetFaults(Faults{ItemTooManyRequestsFraction: 1}); err != nil {
			t.Fatal(err)
		}
		items := bulkItems(t, hs.URL+"/_bulk", doc+doc)
		for _, it := range items {
			if it.Status != 429 || it.Error.Type != "es_rejected_execution_exception" {
				t.Errorf("item %+v, want 429", it)
			}
		}
		if st := s.Stats(); st.Documents != 0 || st.RejectedItems != 2 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("reply lost after indexing", func(t *testing.T) {
		s, hs := newTestServer(t, Options{})
		if err := s.SetFaults(Faults{ReplyLostFraction: 1}); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(hs.URL+"/_bulk", "application/x-ndjson", strings.NewReader(doc+doc))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("got %d, want the connection reset", resp.StatusCode)
		}
		if st := s.Stats(); st.Documents != 2 {
			t.Errorf("stats %+v, want both documents indexed although the reply was lost", st)
		}
		if err := s.SetFaults(Faults{ReplyLostFraction: 1.5}); err == nil {
			t.Error("reply_lost_fraction 1.5 accepted")
		}
	})
	t.Run("requests 503 and latency via the control API", func(t *testing.T) {
		s, hs := newTestServer(t, Options{})
		req, _ := http.NewRequest(http.MethodPut, hs.URL+"/_standin/faults", strings.NewReader(`{"latency":"50ms","request_503_fraction":1}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || time.Duration(s.Faults().Latency) != 50*time.Millisecond {
			t.Fatalf("PUT faults: %d, faults %+v", resp.StatusCode, s.Faults())
		}
		start := time.Now()
		resp, b := post(t, hs.URL+"/_bulk", "application/json", []byte(doc), nil)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "unavailable_shards_exception") {
			t.Errorf("status %d: %s", resp.StatusCode, b)
		}
		if took := time.Since(start); took < 50*time.Millisecond {
			t.Errorf("answered after %s, want at least the 50ms latency", took)
		}
	})
	t.Run("invalid faults", func(t *testing.T) {
		s, hs := newTestServer(t, Options{})
		if err := s.SetFaults(Faults{ItemTooManyRequestsFraction: 2}); err == nil {
			t.Error("fraction 2 accepted")
		}
		req, _ := http.NewRequest(http.MethodPut, hs.URL+"/_standin/faults", strings.NewReader(`{"latency":5}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d for a numeric latency, want 400", resp.StatusCode)
		}
	})
}

func TestConnectionFaults(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	get := func() error {
		resp, err := client.Get(s.URL() + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("healthy server: %v", err)
	}
	if err := s.SetFaults(Faults{ResetConnections: true}); err != nil {
		t.Fatal(err)
	}
	if err := get(); err == nil {
		t.Error("request succeeded while connections are reset")
	}
	if err := s.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	if err := get(); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("while refusing: %v, want connection refused", err)
	}
	if err := s.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	if err := get(); err != nil {
		t.Errorf("after refusing ended: %v", err)
	}
}

func TestOtherEndpoints(t *testing.T) {
	s, hs := newTestServer(t, Options{Version: "8.13.4"})
	for _, tt := range []struct {
		method, path string
		wantStatus   int
		wantBody     string
	}{
		{"GET", "/", 200, `"number":"8.13.4"`},
		{"DELETE", "/", 405, "Incorrect HTTP method"},
		{"GET", "/_bulk", 405, "Incorrect HTTP method"},
		{"GET", "/_cluster/health", 200, `"status":"green"`},
		{"GET", "/_index_template", 200, `"name":"logs"`},
		{"GET", "/traces-*/_count", 200, `"count":0`},
		{"GET", "/_search", 400, "unsupported request"},
		{"GET", "/_standin/stats", 200, `"documents":0`},
		{"GET", "/_standin/nothing", 404, "no stand-in control endpoint"},
	} {
		req, _ := http.NewRequest(tt.method, hs.URL+tt.path, http.NoBody)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.wantStatus || !strings.Contains(string(b), tt.wantBody) || resp.Header.Get("X-Elastic-Product") != "Elasticsearch" {
			t.Errorf("%s %s: %d %s (product %q), want %d containing %s", tt.method, tt.path, resp.StatusCode, b,
				resp.Header.Get("X-Elastic-Product"), tt.wantStatus, tt.wantBody)
		}
	}
	// 8.13 has no otel templates, so its template list must not pretend otherwise.
	for _, tmpl := range s.Templates() {
		if strings.Contains(tmpl.Name, "otel") {
			t.Errorf("8.13 lists template %s", tmpl.Name)
		}
	}
	if _, err := New(Options{Version: "6.8.0"}); err == nil {
		t.Error("version 6.8.0 accepted")
	}
}

// TestCountOnly: without parsing sources the stand-in answers and counts as it does with parsing,
// for the exporter's otel and ECS document shapes, and still applies the data stream rules.
func TestCountOnly(t *testing.T) {
	body := `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" +
		`{"@timestamp":"1.0","trace_id":"01","span_id":"aa","resource":{"attributes":{"service.name":"cart"}}}` + "\n" +
		`{"create":{"_index":"traces-apm-default"}}` + "\n" +
		`{"@timestamp":"1","span":{"id":"bb"},"service":{"name":"shop"}}` + "\n" +
		`{"create":{"_index":"traces-generic.otel-default"}}` + "\n" +
		`{"span_id":"cc"}` + "\n" +
		string(exporterBulk(3))
	var answers [2]string
	var stats [2]Stats
	for i, countOnly := range []bool{false, true} {
		s, err := New(Options{CountOnly: countOnly})
		if err != nil {
			t.Fatal(err)
		}
		s.catalog.today = func() string { return "2026.11.30" }
		hs := httptest.NewServer(s.Handler())
		resp, b := post(t, hs.URL+"/_bulk?filter_path="+exporterFilter, "application/json", []byte(body), nil)
		hs.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("CountOnly %v: status %d: %s", countOnly, resp.StatusCode, b)
		}
		answers[i], stats[i] = string(b), s.Stats()
	}
	if answers[0] != answers[1] {
		t.Errorf("answers differ:\nparsing    %s\ncount-only %s", answers[0], answers[1])
	}
	if !strings.Contains(answers[1], "data stream timestamp field [@timestamp] is missing") {
		t.Errorf("the document without @timestamp was not refused: %s", answers[1])
	}
	want := map[string]int{"cart": 1, "shop": 1, "bench-otlp": 3}
	for i, st := range stats {
		if !maps.Equal(st.SpansByService, want) || st.Documents != 5 || st.RejectedItems != 1 {
			t.Errorf("run %d: stats %+v, want 5 documents, 1 rejected, services %v", i, st, want)
		}
	}
	if _, err := New(Options{CountOnly: true, KeepDocuments: true}); err == nil {
		t.Error("CountOnly with KeepDocuments accepted")
	}
}

// TestSourceBytes: the stand-in sums the source lines' bytes after decompression, per index and
// over the span documents, with and without parsing, for documents with and without an _id.
// SpanSourceBytes leaves out a span event's document in logs-*; neither counts the action lines or
// a refused resent copy.
func TestSourceBytes(t *testing.T) {
	const (
		traces = "traces-generic.otel-default"
		logs   = "logs-generic.otel-default"
		span   = `{"@timestamp":"1.0","span_id":"aa","resource":{"attributes":{"service.name":"cart"}}}` // 85 bytes
		spanID = `{"@timestamp":"2.0","span_id":"bb","name":"GET /"}`                                    // 50 bytes, written with an _id
		event  = `{"@timestamp":"1.0","span_id":"aa","event_name":"exception"}`                          // 60 bytes
	)
	// The body is sent twice: the second copy of the document with an _id is refused (409).
	const wantSpans, wantLogs = 2*85 + 50, 2 * 60
	body := `{"create":{"_index":"` + traces + `"}}` + "\n" + span + "\n" +
		`{"create":{"_id":"0001","_index":"` + traces + `"}}` + "\n" + spanID + "\n" +
		`{"create":{"_index":"` + logs + `"}}` + "\n" + event + "\n"
	for _, countOnly := range []bool{false, true} {
		s, err := New(Options{CountOnly: countOnly})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		for range 2 {
			resp, b := post(t, hs.URL+"/_bulk?filter_path="+exporterFilter, "application/json", gzipped(t, body), map[string]string{"Content-Encoding": "gzip"})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("CountOnly %v: status %d: %s", countOnly, resp.StatusCode, b)
			}
		}
		hs.Close()
		st := s.Stats()
		if st.RejectedReasons["version_conflict_engine_exception"] != 1 || st.ByIndex[traces] != 3 {
			t.Fatalf("CountOnly %v: stats %+v, want 3 spans and the resent id refused", countOnly, st)
		}
		want := map[string]int64{traces: wantSpans, logs: wantLogs}
		if st.SpanSourceBytes != wantSpans || !maps.Equal(st.SourceBytesByIndex, want) {
			t.Errorf("CountOnly %v: span source bytes %d, by index %v; want %d, %v", countOnly, st.SpanSourceBytes, st.SourceBytesByIndex, int64(wantSpans), want)
		}
		s.Reset()
		if st := s.Stats(); st.SpanSourceBytes != 0 || len(st.SourceBytesByIndex) != 0 {
			t.Errorf("CountOnly %v: after reset: %+v", countOnly, st)
		}
	}
}

// TestDeflateBodies: Content-Encoding deflate is zlib-wrapped in HTTP, and raw DEFLATE is
// accepted too, as Elasticsearch accepts both.
func TestDeflateBodies(t *testing.T) {
	const body = `{"create":{"_index":"plain"}}` + "\n" + `{"a":1}` + "\n"
	var zlibBody, rawBody bytes.Buffer
	zw := zlib.NewWriter(&zlibBody)
	fw, _ := flate.NewWriter(&rawBody, flate.DefaultCompression)
	for _, w := range []io.WriteCloser{zw, fw} {
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range map[string][]byte{"zlib": zlibBody.Bytes(), "raw": rawBody.Bytes()} {
		t.Run(name, func(t *testing.T) {
			s, hs := newTestServer(t, Options{})
			resp, out := post(t, hs.URL+"/_bulk", "application/json", b, map[string]string{"Content-Encoding": "deflate"})
			if resp.StatusCode != http.StatusOK || s.Stats().Documents != 1 {
				t.Errorf("status %d, %d documents: %s", resp.StatusCode, s.Stats().Documents, out)
			}
		})
	}
}

// TestIndexOverwrites: an index action on an existing id replaces the document, as in
// Elasticsearch: one document, the new source, version 2, "updated".
func TestIndexOverwrites(t *testing.T) {
	s, hs := newTestServer(t, Options{})
	body := `{"index":{"_index":"plain","_id":"x"}}` + "\n" + `{"a":1}` + "\n"
	bulkItems(t, hs.URL+"/_bulk", body)
	_, b := post(t, hs.URL+"/_bulk", "application/json", []byte(strings.Replace(body, `{"a":1}`, `{"a":2}`, 1)), nil)
	var r struct {
		Items []map[string]struct {
			Version int    `json:"_version"`
			Result  string `json:"result"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if it := r.Items[0]["index"]; it.Version != 2 || it.Result != "updated" {
		t.Errorf("second write: %s", b)
	}
	docs := s.Documents()
	if st := s.Stats(); st.Documents != 1 || len(docs) != 1 || string(docs[0].Source) != `{"a":2}` {
		t.Errorf("stats %+v, documents %v: want the one document, with the new source", st, docs)
	}
}

// TestBulkQueryParameters: Elasticsearch refuses a whole bulk with a parameter it does not know
// (for its version), or a boolean that is not one.
func TestBulkQueryParameters(t *testing.T) {
	const body = `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" + `{"@timestamp":"2026-11-30T00:00:00Z","span_id":"01"}` + "\n"
	for _, tt := range []struct {
		version, query string
		wantStatus     int
		wantReason     string
	}{
		{"8.17.0", "?filter_path=items.*.status&require_data_stream=true&refresh=false", 200, ""},
		{"8.17.0", "?require_data_stream", 200, ""}, // empty: true
		{"8.17.0", "?color=red", 400, "contains unrecognized parameter: [color]"},
		{"8.17.0", "?include_source_on_error=false", 400, "contains unrecognized parameter: [include_source_on_error]"},
		{"8.18.0", "?include_source_on_error=false&require_data_stream=true", 200, ""},
		{"8.11.4", "?require_data_stream=true", 400, "contains unrecognized parameter: [require_data_stream]"},
		{"8.17.0", "?require_data_stream=yes", 400, "Failed to parse value [yes]"},
	} {
		t.Run(tt.version+tt.query, func(t *testing.T) {
			_, hs := newTestServer(t, Options{Version: tt.version})
			resp, b := post(t, hs.URL+"/_bulk"+tt.query, "application/json", []byte(body), nil)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(string(b), tt.wantReason) {
				t.Errorf("%d %s, want %d %q", resp.StatusCode, b, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

// TestDuplicateKey: Elasticsearch refuses a duplicate key in one object, at any depth.
func TestDuplicateKey(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":2}`:                   "",
		`{"a":1,"a":2}`:                   "a",
		`{"a":{"x":1},"b":{"x":1}}`:       "",
		`{"a":{"x":1,"y":{"z":1,"z":2}}}`: "z",
		`{"a":["a","a"],"b":"a"}`:         "",
		`[{"k":1},{"k":1}]`:               "",
		`{"a":[{"k":1,"k":2}]}`:           "k",
		`{"a":{},"a":[]}`:                 "a",
		`not json`:                        "",
	} {
		if got := duplicateKey([]byte(in)); got != want {
			t.Errorf("duplicateKey(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestOverwriteOfAnUnstoredDocumentCounts: a version above 1 whose first write was never stored
// (its request failed after the version was taken) is the document's first copy, and counted.
func TestOverwriteOfAnUnstoredDocumentCounts(t *testing.T) {
	st, err := newStore(true, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.add([]Document{{Index: "plain", ID: "x", Source: []byte(`{"a":2}`), version: 2}}); err != nil {
		t.Fatal(err)
	}
	if got := st.snapshot(); got.Documents != 1 || len(st.documents()) != 1 {
		t.Errorf("stats %+v: want the document counted once", got)
	}
}

// tsIndex is the backing index of metrics-app.otel-default on the test servers' date.
const tsIndex = ".ds-metrics-app.otel-default-2026.11.30-000001"

// aggIndex is that of the connector's metrics-service_transaction.1m.otel-default.
const aggIndex = ".ds-metrics-service_transaction.1m.otel-default-2026.11.30-000001"

// tsDoc is a metric document as the exporter writes it in otel mode: metrics holds the values,
// everything else identifies the time series and its timestamp.
// tsDocCount is tsDoc for host "a" with a _doc_count and a start_timestamp, as the exporter writes
// histogram-backed aggregated metrics.
func tsDocCount(metrics string, docCount int, start string) string {
	return strings.Replace(tsDoc(metrics, "a"), `"_metric_names_hash"`, `"_doc_count":`+strconv.Itoa(docCount)+`,"start_timestamp":"`+start+`","_metric_names_hash"`, 1)
}

func tsDoc(metrics, host string) string {
	return `{"@timestamp":"2026-11-30T00:00:00Z","_metric_names_hash":"h1","resource":{"attributes":{"host.name":"` + host +
		`"}},"metrics":` + metrics + `}`
}

// TestWithoutID: an action line that differs from the others only in its first or last _id is
// parsed once without it; any other shape goes to the parser whole.
func TestWithoutID(t *testing.T) {
	for _, tc := range []struct{ line, rest, id string }{
		{`{"create":{"_index":"traces-x","_id":"4bf9"}}`, `{"create":{"_index":"traces-x"}}`, "4bf9"},
		{`{"create":{"_index":"traces-x"}}`, `{"create":{"_index":"traces-x"}}`, ""},
		{`{"create":{"_id":"a","_index":"x"}}`, `{"create":{"_index":"x"}}`, "a"},                                        // first: go-docappender's form
		{`{"create":{"_index":"x","_id":"a","pipeline":"p"}}`, `{"create":{"_index":"x","_id":"a","pipeline":"p"}}`, ""}, // in the middle
		{`{"create":{"_id":"a"}}`, `{"create":{}}`, "a"},
		{`{"create":{"_id":"a","_id":"b"}}`, `{"create":{"_id":"a","_id":"b"}}`, ""},
		{`{"create":{"x":{"_id":"a","y":1}}}`, `{"create":{"x":{"_id":"a","y":1}}}`, ""}, // not the action's member
		{`{"create":{"_id":"a\\"b","_index":"x"}}`, `{"create":{"_id":"a\\"b","_index":"x"}}`, ""},
		{`{"create":{"_index":"x","_id":"a\"b"}}`, `{"create":{"_index":"x","_id":"a\"b"}}`, ""}, // escaped
		{`{"create":{"_index":"x","_id":"a","_id":"b"}}`, `{"create":{"_index":"x","_id":"a","_id":"b"}}`, ""},
		{`{"create":{"_index":"x","_id":"a"}} `, `{"create":{"_index":"x","_id":"a"}} `, ""},
	} {
		rest, id, ok := withoutID([]byte(tc.line))
		if string(rest) != tc.rest || id != tc.id || ok != (tc.id != "") {
			t.Errorf("withoutID(%s) = %s, %q, %v; want %s, %q", tc.line, rest, id, ok, tc.rest, tc.id)
		}
	}
}

// TestOnSpan: with and without parsing, the function gets the trace id of every span document
// stored (otel and ECS shapes), not of a log document, a refused item or a refused resent copy,
// and nothing once it is removed.
func TestOnSpan(t *testing.T) {
	body := `{"create":{"_index":"traces-generic.otel-default"}}` + "\n" +
		`{"@timestamp":"1.0","trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"aa"}` + "\n" +
		`{"create":{"_index":"traces-apm-default"}}` + "\n" +
		`{"@timestamp":"1","trace":{"id":"4bf92f3577b34da6a3ce929d0e0e4736"},"span":{"id":"bb"}}` + "\n" +
		`{"create":{"_index":"logs-generic.otel-default"}}` + "\n" +
		`{"@timestamp":"1.0","trace_id":"ffffffffffffffffffffffffffffffff","event_name":"exception"}` + "\n" +
		`{"create":{"_index":"traces-generic.otel-default"}}` + "\n" +
		`{"trace_id":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"}` + "\n" + // no @timestamp: refused
		`{"create":{"_id":"x1","_index":"traces-generic.otel-default"}}` + "\n" +
		`{"@timestamp":"2.0","trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"cc"}` + "\n"
	for _, countOnly := range []bool{false, true} {
		s, err := New(Options{CountOnly: countOnly})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		var mu sync.Mutex
		var got []string
		s.OnSpan(func(id string) {
			mu.Lock()
			got = append(got, id)
			mu.Unlock()
		})
		for range 2 { // the second time, the document with an _id is a refused copy
			if resp, b := post(t, hs.URL+"/_bulk", "application/json", []byte(body), nil); resp.StatusCode != http.StatusOK {
				t.Fatalf("CountOnly %v: status %d: %s", countOnly, resp.StatusCode, b)
			}
		}
		s.OnSpan(nil)
		post(t, hs.URL+"/_bulk", "application/json", []byte(body), nil)
		hs.Close()
		want := []string{
			"0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c",
			"0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736",
		}
		if !slices.Equal(got, want) {
			t.Errorf("CountOnly %v: trace ids %v, want %v", countOnly, got, want)
		}
	}
}
