package bufferprocessor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanRef is where a span sits: its resource, its scope and its name.
type spanRef struct{ resource, scope, name string }

func spanRefs(td ptrace.Traces) []spanRef {
	var out []spanRef
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		svc, _ := rss.At(i).Resource().Attributes().Get("service.name")
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				out = append(out, spanRef{svc.Str(), sss.At(j).Scope().Name(), spans.At(k).Name()})
			}
		}
	}
	return out
}

// unevenTraces has 3 resources of 2 scopes; span sizes vary from tens of bytes to pad bytes.
func unevenTraces(spansPerScope, pad int) ptrace.Traces {
	td := ptrace.NewTraces()
	n := 0
	for r := range 3 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		for s := range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(fmt.Sprintf("scope-%d", s))
			for range spansPerScope {
				sp := ss.Spans().AppendEmpty()
				sp.SetName(strconv.Itoa(n))
				if n%7 == 0 {
					sp.Attributes().PutStr("payload", strings.Repeat("x", pad))
				}
				n++
			}
		}
	}
	return td
}

func TestSplitBySize(t *testing.T) {
	var m ptrace.ProtoMarshaler
	for _, tt := range []struct {
		name               string
		spansPerScope, pad int
		maxBytes           int
		wantParts          int // 0: more than one, not checked exactly
	}{
		{"fits: one part, the batch itself", 10, 100, 1 << 20, 1},
		{"a few parts", 200, 2000, 64 << 10, 0},
		{"spans larger than the limit stay whole", 5, 4000, 1000, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			td := unevenTraces(tt.spansPerScope, tt.pad)
			want := spanRefs(td)
			parts := tracesOnly.splitBySize(td, tt.maxBytes)
			if tt.wantParts > 0 {
				require.Len(t, parts, tt.wantParts)
			} else {
				require.Greater(t, len(parts), 1)
			}
			assert.Equal(t, td, parts[len(parts)-1], "the batch itself is the last part")
			var got []spanRef
			for i, p := range parts {
				size := m.TracesSize(p)
				if p.SpanCount() > 1 {
					assert.LessOrEqual(t, size, tt.maxBytes, "part %d of %d spans", i, p.SpanCount())
				}
				rss := p.ResourceSpans()
				for r := range rss.Len() {
					require.Positive(t, rss.At(r).ScopeSpans().Len(), "part %d has an empty resource", i)
					for s := range rss.At(r).ScopeSpans().Len() {
						require.Positive(t, rss.At(r).ScopeSpans().At(s).Spans().Len(), "part %d has an empty scope", i)
					}
				}
				got = append(got, spanRefs(p)...)
			}
			assert.Equal(t, want, got, "every span once, in order, under its resource and scope")
		})
	}
}

// sizeLimitedConsumer refuses, permanently, any request above limit serialized bytes, as an
// OTLP/HTTP gateway with max_request_body_size does (413), and records what it took.
type sizeLimitedConsumer struct {
	*recorder
	limit   int
	mu      sync.Mutex
	largest int
	hang    chan struct{} // when set, calls after the first wait for it (or the context)
	offers  atomic.Int64
}

func (c *sizeLimitedConsumer) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	offer := c.offers.Add(1)
	c.events.bump()
	var m ptrace.ProtoMarshaler
	size := m.TracesSize(td)
	c.mu.Lock()
	c.largest = max(c.largest, size)
	c.mu.Unlock()
	if size > c.limit {
		return consumererror.NewPermanent(fmt.Errorf("request of %d bytes above the limit", size))
	}
	if c.hang != nil && offer > 1 {
		select {
		case <-c.hang:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return c.recorder.ConsumeTraces(ctx, td)
}

// waitOffers waits until n requests were offered, accepted or not.
func (c *sizeLimitedConsumer) waitOffers(t *testing.T, n int64) {
	t.Helper()
	c.events.waitFor(t, fmt.Sprintf("%d offers", n), func() bool { return c.offers.Load() >= n })
}

// bigBatch is one batch of n spans of about 6 KB each, named from 0.
func bigBatch(n int) ptrace.Traces {
	td := makeTraces(rangeIDs(0, n)...)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).Attributes().PutStr("db.statement", strings.Repeat("q", 6000))
	}
	return td
}

// TestOversizedBatchIsDeliveredInParts: one request above maxDeliveryBytes (a 25 MiB Datadog
// payload, say) reaches a next consumer that refuses more than 8 MiB in parts, not refused whole
// and dropped.
func TestOversizedBatchIsDeliveredInParts(t *testing.T) {
	const n = 3000 // ~18 MB
	for _, pooling := range []bool{false, true} {
		t.Run(fmt.Sprintf("pdata.useProtoPooling=%v", pooling), func(t *testing.T) {
			if pooling {
				useProtoPooling(t) // the parts are the buffer's and recycled after delivery
			}
			next := &sizeLimitedConsumer{recorder: newRecorder(), limit: maxDeliveryBytes}
			h := start(t, memCfg(), pipelineOwned{next}, nil)
			td := bigBatch(n)
			var m ptrace.ProtoMarshaler
			require.Greater(t, m.TracesSize(td), 2*maxDeliveryBytes)
			require.NoError(t, pipelineOwned{h.p}.ConsumeTraces(context.Background(), td))
			next.waitDistinct(t, n)
			h.shutdown(t)
			assert.Zero(t, next.checkAll(t, rangeIDs(0, n)), "duplicates")
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""))
			assert.Equal(t, int64(n), h.sum(t, "processor_buffer_delivered_spans", ""))
			assert.LessOrEqual(t, next.largest, maxDeliveryBytes)
			next.mu.Lock()
			defer next.mu.Unlock()
			assert.GreaterOrEqual(t, len(next.calls), 3, "parts: %v", next.calls)
		})
	}
}

// TestOversizedBatchShutdownSavesTheRest: shutdown during a delivery in parts writes only the
// parts not yet delivered to disk; after a restart they arrive, and the delivered part does not
// arrive twice. In write_ahead the batch's record was on disk all along: it is replaced by the
// rest, not replayed whole.
func TestOversizedBatchShutdownSavesTheRest(t *testing.T) {
	const n = 3000
	for _, mode := range []string{ModeOverflow, ModeWriteAhead} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cfg := diskCfg(dir, mode, FsyncNever)
			cfg.ShutdownTimeout = 200 * time.Millisecond
			first := &sizeLimitedConsumer{recorder: newRecorder(), limit: maxDeliveryBytes, hang: make(chan struct{})}
			h := start(t, cfg, first, nil)
			require.NoError(t, h.p.ConsumeTraces(context.Background(), bigBatch(n)))
			first.waitOffers(t, 2)
			require.NoError(t, shutdownReturns(context.Background(), t, h))
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""))
			delivered := first.distinct()
			require.Positive(t, delivered)
			require.Less(t, delivered, n)

			second := newRecorder()
			h2 := start(t, cfg, second, nil)
			second.waitDistinct(t, n-delivered)
			h2.shutdown(t)
			second.mu.Lock()
			defer second.mu.Unlock()
			first.mu.Lock()
			defer first.mu.Unlock()
			for name := range first.seen {
				assert.Zero(t, second.seen[name], "span %s delivered before the shutdown and again after it", name)
			}
			assert.Equal(t, n, len(first.seen)+len(second.seen))
		})
	}
}

// TestMergePartsCopiesReadOnlyParts: a part the collector's fanout marked read-only (offered to
// several consumers) is copied into the merged rest, not moved (which would panic).
func TestMergePartsCopiesReadOnlyParts(t *testing.T) {
	a, b := makeTraces(1, 2), makeTraces(3)
	a.MarkReadOnly()
	rest := tracesOnly.mergeParts([]ptrace.Traces{a, b})
	assert.Equal(t, []spanRef{{"", "", "1"}, {"", "", "2"}, {"", "", "3"}}, spanRefs(rest))
	assert.Equal(t, 2, a.SpanCount(), "the read-only part is left as it was")
	assert.Zero(t, b.SpanCount(), "a writable part is moved")
}

// TestMoveLeadingSpansLeavesNoEmptyEntries: resources and scopes without spans are neither copied
// into the part nor left behind.
func TestMoveLeadingSpansLeavesNoEmptyEntries(t *testing.T) {
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty() // no scopes
	rs := td.ResourceSpans().AppendEmpty()
	rs.ScopeSpans().AppendEmpty() // no spans
	ss := rs.ScopeSpans().AppendEmpty()
	for i := range 4 {
		ss.Spans().AppendEmpty().SetName(strconv.Itoa(i))
	}
	head := tracesSignal{}.moveLeading(td, 2)
	for name, part := range map[string]ptrace.Traces{"moved": head, "left": td} {
		require.Equal(t, 1, part.ResourceSpans().Len(), name)
		require.Equal(t, 1, part.ResourceSpans().At(0).ScopeSpans().Len(), name)
		assert.Equal(t, 2, part.SpanCount(), name)
	}
	assert.Equal(t, []spanRef{{"", "", "0"}, {"", "", "1"}}, spanRefs(head))
}

// TestShutdownRewriteIsDurableBeforeItsAck: a shutdown in the middle of a delivery in parts
// writes the rest as a new record and acknowledges the old one. With fsync interval or never the
// new record is only in the page cache then, and the kernel may write the ack back first: a power
// failure in between would keep neither. The new record is fsynced before the ack is written.
func TestShutdownRewriteIsDurableBeforeItsAck(t *testing.T) {
	cfg := diskCfg(t.TempDir(), ModeWriteAhead, FsyncNever)
	cfg.ShutdownTimeout = 200 * time.Millisecond
	first := &sizeLimitedConsumer{recorder: newRecorder(), limit: maxDeliveryBytes, hang: make(chan struct{})}
	fs := &orderFS{}
	h := start(t, cfg, first, fs)
	require.NoError(t, h.p.ConsumeTraces(context.Background(), bigBatch(3000)))
	first.waitOffers(t, 2)
	require.NoError(t, shutdownReturns(context.Background(), t, h))
	fs.mu.Lock()
	defer fs.mu.Unlock()
	lastSegWrite := slices.Index(fs.events, "write .seg")
	for i, e := range fs.events {
		if e == "write .seg" {
			lastSegWrite = i // the rewrite at shutdown
		}
	}
	require.Positive(t, lastSegWrite, "the rest was rewritten: %v", fs.events)
	after := fs.events[lastSegWrite+1:]
	ack := slices.Index(after, "write .ack")
	require.GreaterOrEqual(t, ack, 0, "the old record was acknowledged: %v", after)
	assert.Contains(t, after[:ack], "sync .seg", "the ack was written before the new record was synced: %v", after)
}

// tracesOnly is a traces buffer that is never started: for the functions that only need its signal.
var tracesOnly = &bufferProcessor[ptrace.Traces]{sig: tracesSignal{}}
