package esstandin

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestFilterPath(t *testing.T) {
	const resp = `{"took":3,"errors":true,"items":[{"create":{"_index":"a","_id":"1","status":201,"result":"created"}},` +
		`{"index":{"_index":"b","status":400,"error":{"type":"x","reason":"y","caused_by":{"type":"z"}}}}]}`
	tests := []struct {
		filter, want string
	}{
		{"", resp},
		{exporterFilter, `{"items":[{"create":{"_index":"a","status":201}},{"index":{"_index":"b","error":{"reason":"y","type":"x"},"status":400}}]}`},
		{"took", `{"took":3}`},
		{"errors,took", `{"errors":true,"took":3}`},
		{"items.*.error", `{"items":[{"index":{"error":{"caused_by":{"type":"z"},"reason":"y","type":"x"}}}]}`},
		{"**.type", `{"items":[{"index":{"error":{"caused_by":{"type":"z"},"type":"x"}}}]}`},
		{"items.create._id", `{"items":[{"create":{"_id":"1"}}]}`},
		{"nothing", `{}`},
		{"-took", resp},
		{"**.**.**.type", `{"items":[{"index":{"error":{"caused_by":{"type":"z"},"type":"x"}}}]}`},
		{"items.**.caused_by.**", `{"items":[{"index":{"error":{"caused_by":{"type":"z"}}}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(resp), &v); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(filterPath(v, tt.filter))
			if err != nil {
				t.Fatal(err)
			}
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			wantB, _ := json.Marshal(want)
			if !bytes.Equal(got, wantB) {
				t.Errorf("filter %q\n got %s\nwant %s", tt.filter, got, wantB)
			}
		})
	}
}

// TestFilterPathPatternsStayBounded: a filter of many "**" is one "**", and advancing never
// carries the same remaining pattern twice, so a crafted filter_path cannot cost exponential
// time: the patterns carried at every level of a deep response stay at the filter's few suffixes.
func TestFilterPathPatternsStayBounded(t *testing.T) {
	filter := strings.Repeat("**.", 100) + "a.**.**.b"
	patterns := parseFilter(filter)
	if want := [][]string{{"**", "a", "**", "b"}}; !reflect.DeepEqual(patterns, want) {
		t.Fatalf("parsed %v, want %v", patterns, want)
	}
	for depth := range 20 {
		patterns, _ = advance(patterns, "a")
		if len(patterns) > 3 { // "**.a.**.b", "**.b", "b" at most
			t.Fatalf("depth %d: %d patterns carried: %v", depth, len(patterns), patterns)
		}
	}
}

// filterPath applies Elasticsearch's filter_path response filtering to a decoded JSON value, through
// the selector the bulk response writer uses: the generic reference the writer is checked against
// (TestBulkResponseMatchesGenericFilter).
// Supported: comma-separated dotted paths, "*" (and other path.Match globs) within a segment and
// "**" for any depth. Arrays are transparent, as in Elasticsearch. Exclusions ("-path") are not
// supported and are ignored, so the response is never narrower than asked.
func filterPath(v any, filter string) any {
	sel := newSelector(filter)
	if sel.whole {
		return v
	}
	out, ok := filterValue(v, sel)
	if !ok {
		return map[string]any{}
	}
	return out
}

// filterValue returns the parts of v selected by sel, and false when nothing is selected.
func filterValue(v any, sel *selector) (any, bool) {
	if sel.whole {
		return v, true
	}
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, child := range t {
			if c := sel.child(k); c != nil {
				if fv, ok := filterValue(child, c); ok {
					out[k] = fv
				}
			}
		}
		return out, len(out) > 0
	case []any:
		var out []any
		for _, e := range t {
			if fv, ok := filterValue(e, sel); ok {
				out = append(out, fv)
			}
		}
		return out, len(out) > 0
	default:
		// A scalar where the pattern still expects deeper keys is not selected.
		return nil, false
	}
}
