package translator

import (
	"maps"
	"slices"
)

// keyTable maps a fixed set of string keys to values. It is built once and looked up for every
// tag of every span, so it hashes a key by its length and three of its bytes instead of all of
// it (as a Go map does): those tell the tables' keys apart well enough that a lookup costs a few
// byte loads and one or two string comparisons (BenchmarkKeyLookup).
type keyTable[V any] struct {
	keyIndex
	vals []V // by the index of their key
}

// keySlots is the size of a keyIndex's hash table: a load factor under 1/4 for the largest
// table (semconvRules), so that probes stay short; a fixed size spares the bounds checks.
const keySlots = 1024

// keyIndex finds a key's index among a fixed set of keys (fewer than keySlots).
type keyIndex struct {
	keys  []string
	slots [keySlots]uint16 // 1 + the index of the key hashed there; 0 is an empty slot
}

// newKeyTable builds the table of m's keys ("" excluded), in key order: the same table every run.
// More than keySlots/4 keys would make probes long (TestSemconvRulesListEachKeyOnce checks that
// the tables stay below); keys past keySlots-1 are left out, so that a search always ends at an
// empty slot.
func newKeyTable[V any](m map[string]V) *keyTable[V] {
	t := &keyTable[V]{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" || len(t.keys) == keySlots-1 {
			continue
		}
		t.keys, t.vals = append(t.keys, k), append(t.vals, m[k])
		i := keySlot(k)
		for t.slots[i] != 0 {
			i = (i + 1) % keySlots
		}
		t.slots[i] = uint16(len(t.keys))
	}
	return t
}

// keySlot is where the search for k starts.
func keySlot(k string) uint {
	n := len(k)
	h := uint64(n)<<24 | uint64(k[0])<<16 | uint64(k[n/2])<<8 | uint64(k[n-1])
	return uint((h * 0x9E3779B97F4A7C15) >> (64 - 10)) // the top 10 bits: log2(keySlots)
}

// find returns the index of k, or -1.
func (t *keyIndex) find(k string) int {
	if k == "" {
		return -1
	}
	for i := keySlot(k); ; i = (i + 1) % keySlots {
		if j := int(t.slots[i]) - 1; j < 0 || t.keys[j] == k {
			return j
		}
	}
}

// get returns the value of k.
func (t *keyTable[V]) get(k string) (V, bool) {
	if i := t.find(k); i >= 0 {
		return t.vals[i], true
	}
	var zero V
	return zero, false
}
