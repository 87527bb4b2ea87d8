package esstandin

import (
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
			if string(got) != string(wantB) {
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
