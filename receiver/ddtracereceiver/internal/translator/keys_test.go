package translator

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSemconvRulesListEachKeyOnce: a key listed under two rules would take whichever the table
// builder saw last; every unified tag has contrib's name to be renamed to.
func TestSemconvRulesListEachKeyOnce(t *testing.T) {
	seen := map[string]int{}
	for _, e := range semconvRuleEntries {
		for _, k := range e.keys {
			seen[k]++
		}
	}
	for _, k := range semconvIntKeys {
		seen[string(k)]++
	}
	for _, k := range unifiedTagKeys {
		seen[k]++
	}
	for k, n := range seen {
		assert.Equal(t, 1, n, "%s is listed %d times", k, n)
	}
	assert.Len(t, semconvRules.keys, len(seen))
	for _, k := range unifiedTagKeys {
		r := semconvRule(k)
		assert.Equal(t, tagRename, r.action, k)
		assert.NotEmpty(t, r.key, "%s has no rename", k)
	}
	// Probes stay short: the tables fill at most a quarter of their slots.
	assert.LessOrEqual(t, len(semconvRules.keys), keySlots/4)
	assert.LessOrEqual(t, len(renamedKeys.keys), keySlots/4)
}

// TestKeyTable: every key is found with its value, keys that are not there are not found, whatever
// they share with those that are (length, first, middle and last byte).
func TestKeyTable(t *testing.T) {
	m := map[string]int{}
	for i := range 200 {
		m["key."+strconv.Itoa(i)+".x"] = i
	}
	m["a"], m["ab"], m["a.b"] = 1000, 1001, 1002
	table := newKeyTable(m)
	for k, want := range m {
		got, ok := table.get(k)
		require.True(t, ok, k)
		assert.Equal(t, want, got, k)
	}
	for _, k := range []string{"", "b", "key.1", "key.1.y", "kex.1.x", "key.200.x", "a.c", "A"} {
		_, ok := table.get(k)
		assert.False(t, ok, k)
	}
	_, ok := newKeyTable(map[string]int{}).get("a")
	assert.False(t, ok, "empty table")
}
