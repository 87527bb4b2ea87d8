package convert

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"golang.org/x/sync/semaphore"
)

// TestProcessKeyAgreesWithTheResource: two events match by their key exactly when the resource
// attributes putResource writes for them are equal, over every pair of events of the test inputs
// and of copies with one resource field changed.
func TestProcessKeyAgreesWithTheResource(t *testing.T) {
	events := decodedEvents(t)
	base := events[0]
	require.NotNil(t, base.Process)
	for _, change := range []func(e *modelpb.APMEvent){
		func(e *modelpb.APMEvent) { e.Process.Pid = 4242 },
		func(e *modelpb.APMEvent) { e.Process.Ppid = 4242 },
		func(e *modelpb.APMEvent) { e.Process.Argv = append(e.Process.Argv, "--inspect") },
		func(e *modelpb.APMEvent) { e.Container = &modelpb.Container{ImageTag: "v2"} },
		func(e *modelpb.APMEvent) { e.Service.Name = "other" },
		func(e *modelpb.APMEvent) { cold := true; e.Faas = &modelpb.Faas{ColdStart: &cold} },
		func(e *modelpb.APMEvent) {
			e.Labels = map[string]*modelpb.LabelValue{"team": {Value: "edge", Global: true}}
		},
		func(e *modelpb.APMEvent) {
			e.NumericLabels = map[string]*modelpb.NumericLabelValue{"shard": {Value: 3, Global: true}}
		},
		func(e *modelpb.APMEvent) {
			e.Labels = map[string]*modelpb.LabelValue{"route": {Value: "/a"}} // an event's own: same resource
		},
	} {
		changed := base.CloneVT()
		change(changed)
		events = append(events, changed)
	}
	for _, a := range events {
		key := processKeyOf(a)
		for _, b := range events {
			want := resourceOf(a).Equal(resourceOf(b))
			assert.Equal(t, want, key.matches(b), "%v\n%v", resourceOf(a).AsRaw(), resourceOf(b).AsRaw())
		}
	}
}

func resourceOf(e *modelpb.APMEvent) pcommon.Map {
	m := pcommon.NewMap()
	putResource(m, e)
	return m
}

// decodedEvents are the events of every testdata/edot input, as apm-data decodes them.
func decodedEvents(t *testing.T) []*modelpb.APMEvent {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "edot", "*.ndjson"))
	require.NoError(t, err)
	var out []*modelpb.APMEvent
	for _, name := range append(files, "") {
		body := []byte(request)
		if name != "" {
			body, err = os.ReadFile(name)
			require.NoError(t, err)
		}
		proc := elasticapm.NewProcessor(elasticapm.Config{MaxEventSize: 1 << 20, Semaphore: semaphore.NewWeighted(1)})
		var result elasticapm.Result
		require.NoError(t, proc.HandleStream(context.Background(), &modelpb.APMEvent{Event: &modelpb.Event{}}, bytes.NewReader(body), 10,
			modelpb.ProcessBatchFunc(func(_ context.Context, b *modelpb.Batch) error {
				for _, e := range *b {
					out = append(out, e.CloneVT())
				}
				return nil
			}), &result))
	}
	require.Greater(t, len(out), 40)
	return out
}

// TestPrefixedKeysRemembersShortNames: label attribute names are right either way, and only short
// names are remembered.
func TestPrefixedKeysRemembersShortNames(t *testing.T) {
	p := &prefixedKeys{prefix: "labels."}
	long := strings.Repeat("n", maxRememberedName+1)
	assert.Equal(t, "labels.team", p.of("team"))
	assert.Equal(t, "labels."+long, p.of(long))
	assert.Equal(t, "labels.team", p.of("team"))
	assert.Equal(t, int32(1), p.size.Load())
}
