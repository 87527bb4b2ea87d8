package esstandin

import (
	"encoding/json"
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
