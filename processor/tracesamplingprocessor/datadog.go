package tracesamplingprocessor

import (
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/internal/ddsampler"
)

// chunkSpan is one span of a Datadog chunk with what the agent's samplers read of it.
type chunkSpan struct {
	span     ptrace.Span
	service  string
	topLevel bool // the chunk's root, or its parent belongs to another service
}

// scoreSampler keeps a share of the chunks of each signature so that about a target number of
// chunks per second is kept in all: the agent's error sampler.
type scoreSampler interface {
	sample(now time.Time, signature, traceID uint64) bool
}

// datadogSampler is the agent's decision on a chunk that carries a priority (agent.go runSamplers,
// without the probabilistic sampler, which the agent leaves off by default).
type datadogSampler struct {
	errors scoreSampler // nil: errors_per_second 0
	rare   *rareSampler // nil: the rare sampler is off
}

// decide returns whether the chunk is kept and why. A chunk the tracer rejected is dropped before
// any sampler sees it, as in the agent (the ddtrace receiver's drop_rejected_chunks drops the same
// chunks earlier). The rare sampler then runs first on every other chunk, as in the agent, so that
// the signatures of kept chunks count as seen.
func (d *datadogSampler) decide(now time.Time, t *traceFacts, spans []chunkSpan, env string) (bool, reason) {
	if ddsampler.Rejected(t.priority) {
		return false, reasonUserReject
	}
	rare := d.rare != nil && d.rare.sample(now, spans, env)
	switch {
	case rare:
		return true, reasonRareSampler
	case t.priority > 0:
		return true, reasonPriority
	case t.hasError && d.errors != nil && d.errors.sample(now, chunkSignature(spans, env), t.low64()):
		return true, reasonErrorSampler
	}
	return false, reasonAutoReject
}

// needsSpans reports whether decide reads the chunk's spans.
func (d *datadogSampler) needsSpans(t *traceFacts) bool {
	return !ddsampler.Rejected(t.priority) && (d.rare != nil || (t.priority == 0 && t.hasError && d.errors != nil))
}

// spanSignature identifies a span as the agent's samplers do: environment, service, operation,
// error flag, HTTP status and error type, and the resource when asked.
func spanSignature(cs chunkSpan, env string, withResource bool) uint64 {
	s := cs.span
	errFlag := "0"
	if s.Status().Code() == ptrace.StatusCodeError {
		errFlag = "1"
	}
	resource := ""
	if withResource {
		resource = resourceOf(s)
	}
	return signature(env, cs.service, operationOf(s), errFlag, resource, httpStatusOf(s),
		strAttr(s.Attributes(), string(semconv.ErrorTypeKey)))
}

// chunkSignature combines the root's signature (with its resource) with every distinct span
// signature (without), so chunks of the same shape share a budget whatever their order.
func chunkSignature(spans []chunkSpan, env string) uint64 {
	hashes := make([]uint64, 0, len(spans))
	var root uint64
	for _, cs := range spans {
		hashes = append(hashes, spanSignature(cs, env, false))
		if cs.topLevel && root == 0 {
			root = spanSignature(cs, env, true)
		}
	}
	slices.Sort(hashes)
	sig := root
	for i, h := range hashes {
		if i == 0 || h != hashes[i-1] {
			sig ^= h
		}
	}
	return sig
}

// rareSampler keeps a chunk with a top-level span whose signature was not seen within the
// cooldown, at most traces_per_second (burst 50, the agent's), per (env, service) shard.
type rareSampler struct {
	cfg     RareSamplerConfig
	limiter *tokenBucket
	shards  map[uint64]*seenSet
	folds   int64
}

// maxRareShards bounds the (env, service) shards; beyond it services share shards.
const maxRareShards = 10_000

func newRareSampler(cfg RareSamplerConfig) *rareSampler {
	return &rareSampler{cfg: cfg, limiter: newTokenBucket(cfg.TracesPerSecond, 50), shards: map[uint64]*seenSet{}}
}

func (r *rareSampler) shard(env, service string) *seenSet {
	key := signature(env, service)
	if len(r.shards) >= maxRareShards {
		key %= maxRareShards
	}
	s, ok := r.shards[key]
	if !ok {
		s = newSeenSet(r.cfg.Cardinality)
		r.shards[key] = s
	}
	return s
}

func (r *rareSampler) sample(now time.Time, spans []chunkSpan, env string) bool {
	kept := false
	for _, cs := range spans {
		if !cs.topLevel {
			continue
		}
		if !r.shard(env, cs.service).seen(spanSignature(cs, "", true), now) && r.limiter.allow(now) {
			kept = true
			break
		}
	}
	if !kept {
		return false
	}
	for _, cs := range spans {
		if cs.topLevel && r.shard(env, cs.service).remember(spanSignature(cs, "", true), now, r.cfg.Cooldown) {
			r.folds++
		}
	}
	return true
}
