package esstandin

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

// resultAsMap is the generic form of an item's result, as Elasticsearch documents it.
func resultAsMap(r itemResult) map[string]any {
	res := map[string]any{"_index": r.index, "status": r.status()}
	if r.err != nil {
		if r.id != "" {
			res["_id"] = r.id
		}
		res["error"] = map[string]any{"type": r.err.kind, "reason": r.err.reason}
	} else {
		res["_id"], res["_version"], res["_seq_no"], res["_primary_term"] = r.id, r.version, r.seqNo, 1
		res["result"] = "created"
		if r.version > 1 { // independent of itemResult.updated: this is the reference
			res["result"] = "updated"
		}
		res["_shards"] = map[string]any{"total": 1, "successful": 1, "failed": 0}
	}
	return map[string]any{r.action: res}
}

// TestBulkResponseMatchesGenericFilter: the directly written response is, for every filter, what
// filter_path applied to the generic response gives.
func TestBulkResponseMatchesGenericFilter(t *testing.T) {
	items := []itemResult{
		{action: "create", index: ".ds-traces-x-2026.12.01-000001", id: "sd1", version: 1, seqNo: 0},
		{action: "index", index: "plain", id: "given", version: 3, seqNo: 1},
		{action: "create", index: "traces-y", id: "mine", err: &itemError{http.StatusConflict, "version_conflict_engine_exception", `[mine]: "quoted" <version> conflict`}},
		{action: "update", index: "z", err: &itemError{http.StatusBadRequest, "illegal_argument_exception", "naïve\n"}},
	}
	filters := []string{
		"", exporterFilter, "took", "errors,took", "items.*.error", "**.type", "**.status",
		"items.create._id", "items.*._shards.total", "items.*._shards", "items", "items.*", "items.index",
		"nothing", "-took", "items.*.nothing", "**", "items.**.reason", "*.*.*.failed",
	}
	for _, filter := range filters {
		t.Run(filter, func(t *testing.T) {
			var generic []any
			anyError := false
			for _, r := range items {
				generic = append(generic, resultAsMap(r))
				anyError = anyError || r.err != nil
			}
			want := roundTrip(t, filterPath(map[string]any{"took": 7, "errors": anyError, "items": generic}, filter))
			b := appendBulkResponse(nil, 7, anyError, items, newSelector(filter))
			var got any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("invalid JSON %s: %v", b, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("filter %q\n got %s\nwant %s", filter, b, mustMarshal(t, want))
			}
		})
	}
}

// TestBulkResponseOrder: members come in Elasticsearch's order (clients that compare raw bodies,
// and people reading them, see what a cluster sends).
func TestBulkResponseOrder(t *testing.T) {
	items := []itemResult{
		{action: "create", index: "a", id: "sd1", version: 1, seqNo: 4},
		{action: "create", index: "b", err: &itemError{http.StatusNotFound, "index_not_found_exception", "no such index [b]"}},
	}
	got := string(appendBulkResponse(nil, 3, true, items, newSelector("")))
	want := `{"took":3,"errors":true,"items":[` +
		`{"create":{"_index":"a","_id":"sd1","_version":1,"result":"created","_shards":{"total":1,"successful":1,"failed":0},"status":201,"_seq_no":4,"_primary_term":1}},` +
		`{"create":{"_index":"b","status":404,"error":{"type":"index_not_found_exception","reason":"no such index [b]"}}}]}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(mustMarshal(t, v), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
