package esstandin

import (
	"bytes"
	"testing"
)

// FuzzParseBulk feeds arbitrary bodies to the bulk parser: it must never panic, and whatever it
// accepts must be well formed (an action, an index, and for every non-delete action the line
// after it as its source, which may be blank, as in Elasticsearch).
func FuzzParseBulk(f *testing.F) {
	f.Add([]byte(`{"create":{"_index":"a"}}` + "\n" + `{"@timestamp":1}` + "\n"))
	f.Add([]byte(`{"delete":{"_index":"a","_id":"1"}}` + "\n"))
	f.Add([]byte(`{"index":{}}` + "\n\n" + `{}` + "\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"create":{"_index":"a","require_data_stream":true,"dynamic_templates":{"a":"b"}}}` + "\n{}\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, rerr := parseBulk(body, "default")
		if rerr != nil {
			if rerr.status < 400 || rerr.kind == "" || rerr.reason == "" {
				t.Fatalf("incomplete error %+v", rerr)
			}
			return
		}
		if len(items) == 0 {
			t.Fatal("no error and no items")
		}
		for _, it := range items {
			if it.meta.Index == "" || it.action == "" {
				t.Fatalf("item without index or action: %+v", it)
			}
			if bytes.IndexByte(it.source, '\n') >= 0 {
				t.Fatalf("%s item with a source of more than one line: %q", it.action, it.source)
			}
		}
	})
}
