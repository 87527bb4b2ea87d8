package elasticmappingprocessor

import (
	"cmp"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/ecs-documents.golden.json from the processor and exporter's output")

// TestECSDocumentsGolden: the whole ECS documents the processor and the real v0.148.0 exporter
// write for testTraces, field by field, against a golden file (rewritten only with -update). The
// hand-picked assertions of TestECSGapsOfTheExporter show the gaps; this shows everything else
// that would change with the mapping.
func TestECSDocumentsGolden(t *testing.T) {
	docs := ecsDocs(t, true)
	name := func(doc map[string]any) string {
		n, _ := field(doc, "span.name")
		s, _ := n.(string)
		return s
	}
	slices.SortFunc(docs, func(a, b map[string]any) int { return cmp.Compare(name(a), name(b)) })
	got, err := json.MarshalIndent(docs, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", "ecs-documents.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o600))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run TestECSDocumentsGolden -update to create it")
	assert.Equal(t, string(want), string(got), "ECS documents changed; if intended, rerun with -update and review the diff")
}
