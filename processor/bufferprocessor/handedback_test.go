package bufferprocessor

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// handingBack is a next consumer that, on its first call, takes all but the last `back` spans and
// hands those back in a retryable consumererror.Traces, as the Elasticsearch exporters do for the
// documents refused with 429; later calls take everything. It counts every span it took.
type handingBack struct {
	back int

	mu       sync.Mutex
	calls    int
	attempts []int
	seen     map[string]int
}

func (c *handingBack) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *handingBack) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.attempts = append(c.attempts, td.SpanCount())
	again := ptrace.NewTraces()
	spans := again.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	taken := td.SpanCount()
	if c.calls == 1 {
		taken -= c.back
	}
	i := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if i < taken {
					c.seen[s.Name()]++
				} else {
					s.CopyTo(spans.AppendEmpty())
				}
				i++
			}
		}
	}
	if spans.Len() > 0 {
		return consumererror.NewTraces(errors.New("documents refused for now (429)"), again)
	}
	return nil
}

func (c *handingBack) snapshot() (attempts []int, seen map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.attempts), maps.Clone(c.seen)
}

// TestOnlyTheHandedBackSpansAreSentAgain: what the next consumer accepted of a batch is not sent
// again; what it handed back is, until taken; every span is delivered once and counted delivered
// once, in memory mode and with a disk buffer.
func TestOnlyTheHandedBackSpansAreSentAgain(t *testing.T) {
	for name, withStorage := range map[string]bool{"memory": false, "overflow": true} {
		t.Run(name, func(t *testing.T) {
			next := &handingBack{back: 30, seen: map[string]int{}}
			h := start(t, overflowCfgIf(withStorage, t.TempDir()), next, nil)
			ids := rangeIDs(0, 100)
			require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(ids...)))
			require.Eventually(t, func() bool {
				_, seen := next.snapshot()
				return len(seen) == len(ids)
			}, livenessBound, time.Millisecond, "every span delivered")
			h.shutdown(t)
			attempts, seen := next.snapshot()
			assert.Equal(t, []int{100, 30}, attempts, "the second attempt carries the handed-back spans only")
			assert.Len(t, seen, 100)
			for name, n := range seen {
				assert.Equal(t, 1, n, "span %s", name)
			}
			assert.Equal(t, int64(100), h.sum(t, "processor_buffer_delivered_spans", ""))
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""))
		})
	}
}
