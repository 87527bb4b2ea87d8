package jsonmap

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestInto(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]any
	}{
		{"empty", `{}`, map[string]any{}},
		{
			"scalars", ` {"a":"x","b":12,"c":-1.5,"d":true,"e":false,"f":null,"g":1e3} `,
			map[string]any{"a": "x", "b": int64(12), "c": -1.5, "d": true, "e": false, "f": nil, "g": 1000.0},
		},
		{
			"nested", `{"a":{"b":[1,"x",{"c":[]}]}}`,
			map[string]any{"a": map[string]any{"b": []any{int64(1), "x", map[string]any{"c": []any{}}}}},
		},
		{"escapes", `{"s":"q\"b\\s\/n\nt\tu\u00e9\ud83d\ude00"}`, map[string]any{"s": "q\"b\\s/n\nt\tué😀"}},
		{"big integer", `{"n":18446744073709551615}`, map[string]any{"n": 18446744073709551615.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := pcommon.NewMap()
			m.PutStr("stale", "x")
			require.NoError(t, Into([]byte(tt.in), m))
			assert.Equal(t, tt.want, m.AsRaw())
		})
	}
}

func TestIntoRefuses(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":tru}`, `{"a":"x}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{} x`, `{"a":-}`, `{"a":[1 2]}`,
	} {
		require.Error(t, Into([]byte(in), pcommon.NewMap()), in)
	}
	deep := ""
	var deepSb42 strings.Builder
	for range maxDepth + 1 {
		deepSb42.WriteString(`{"a":`)
	}
	deep += deepSb42.String()
	assert.Error(t, Into([]byte(deep+"1"), pcommon.NewMap()))
}

// FuzzInto: whatever the bytes, no panic; what parses is what encoding/json reads.
func FuzzInto(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5,"x",{"b":null}]}`, `{"s":"\u00e9\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := pcommon.NewMap()
		if Into(data, m) != nil {
			return
		}
		var want map[string]any
		if json.Unmarshal(data, &want) != nil {
			return // stricter about UTF-8 and duplicates than this parser needs to be
		}
		got, err := json.Marshal(m.AsRaw())
		require.NoError(t, err)
		var back map[string]any
		require.NoError(t, json.Unmarshal(got, &back))
		wantJSON, _ := json.Marshal(want)
		var wantBack map[string]any
		require.NoError(t, json.Unmarshal(wantJSON, &wantBack))
		assert.Equal(t, wantBack, back)
	})
}
