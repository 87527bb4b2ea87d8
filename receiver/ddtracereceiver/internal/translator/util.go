package translator

import (
	"maps"
	"slices"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

func sortedKVs(m map[string]string) []payload.KV {
	kvs := make([]payload.KV, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kvs = append(kvs, payload.KV{Key: k, Value: m[k]})
	}
	return kvs
}
