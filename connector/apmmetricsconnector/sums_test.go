package apmmetricsconnector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// resourceKey tells resources apart exactly as the kept attribute maps would: equal keys for
// equal maps (also across the two attribute sets), different keys otherwise.
func TestResourceKey(t *testing.T) {
	common := []attrSpec{optional("service.name"), withDefault("agent.name", "unknown")}
	transaction := []attrSpec{optional("host.name"), optional("service.name"), withDefault("agent.name", "unknown")}
	key := func(specs []attrSpec, attrs map[string]any) string {
		m := pcommon.NewMap()
		if err := m.FromRaw(attrs); err != nil {
			t.Fatal(err)
		}
		return string(resourceKey(nil, specs, &mapSource{m}))
	}
	for _, tc := range []struct {
		name   string
		aSpecs []attrSpec
		a      map[string]any
		bSpecs []attrSpec
		b      map[string]any
		same   bool
	}{
		{"the two sets keep the same attributes", common, map[string]any{"service.name": "cart"}, transaction, map[string]any{"service.name": "cart"}, true},
		{"the transaction set keeps one more", common, map[string]any{"service.name": "cart", "host.name": "h1"}, transaction, map[string]any{"service.name": "cart", "host.name": "h1"}, false},
		{"attributes no set keeps do not count", common, map[string]any{"service.name": "cart", "pid": 1}, common, map[string]any{"service.name": "cart", "pid": 2}, true},
		{"the default equals the value it stands for", common, map[string]any{}, common, map[string]any{"agent.name": "unknown"}, true},
		{"another value", common, map[string]any{"service.name": "cart"}, common, map[string]any{"service.name": "carts"}, false},
		{"another type", common, map[string]any{"service.name": "1"}, common, map[string]any{"service.name": 1}, false},
		{"missing against empty", common, map[string]any{}, common, map[string]any{"service.name": ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.same, key(tc.aSpecs, tc.a) == key(tc.bSpecs, tc.b))
		})
	}
}
