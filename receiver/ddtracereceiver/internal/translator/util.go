package translator

import (
	"sort"
	"strings"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedKVs(m map[string]string) []payload.KV {
	kvs := make([]payload.KV, 0, len(m))
	for _, k := range sortedKeys(m) {
		kvs = append(kvs, payload.KV{Key: k, Value: m[k]})
	}
	return kvs
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
