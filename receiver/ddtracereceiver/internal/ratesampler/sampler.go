// Package ratesampler computes the rate_by_service table the Datadog Agent sends to tracers: per
// (service, env) of the traces' roots, the share of traces a tracer should keep so that all of
// them together keep about a target number of traces per second. The algorithm is the agent's
// priority sampler (pkg/trace/sampler in github.com/DataDog/datadog-agent), whose arithmetic is
// internal/ddsampler's Budget; this package counts chunks by their root's (service, env) and
// writes the table tracers read.
package ratesampler

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracegate/tracegate/internal/ddsampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// batchSize bounds the distinct signatures a request gathers before taking the lock: most
// requests carry one or two, and a hostile one with thousands takes it every 16.
const batchSize = 16

// Signature is what a rate applies to: the root span's service and the trace's env.
type Signature struct{ Service, Env string }

// Reply is the body every rates route answers with, and its Datadog-Rates-Payload-Version.
type Reply struct {
	Body    []byte
	Version string // "" until the first rates are computed, as the agent's
}

// Counted says what one Count did, for the receiver's telemetry.
type Counted struct {
	Rotated   bool // a new bucket began and the rates were computed again
	Changed   bool // and the table differs from the previous one (a new version)
	Services  int  // signatures tracked after the computation (when Rotated)
	Untracked int  // chunks of new signatures past MaxServices: in the total only
}

// Sampler counts traces and computes the rates. Count and Reply are safe for concurrent use.
type Sampler struct {
	prefix string // makes versions unique per process, so replicas never share one

	mu      sync.Mutex
	budget  *ddsampler.Budget[Signature]
	keys    map[Signature]keys // each rated signature's table keys, quoted once
	updates uint64

	reply atomic.Pointer[Reply]
}

// keys are a signature's keys in the table, quoted for JSON: "service:S,env:E", and
// "service:S,env:" when E is DefaultEnv (else empty).
type keys struct{ key, alias string }

// New returns a sampler with cfg's target and limit, replying with an empty table (tracers then
// keep their own default, 1) until the first traces are counted.
func New(cfg Config) *Sampler {
	s := &Sampler{
		prefix: rand.Text()[:8],
		budget: ddsampler.NewBudget[Signature](cfg.TargetTracesPerSecond, cfg.MaxServices),
		keys:   make(map[Signature]keys),
	}
	// The strings point into the request's body: copies keep it from being retained.
	s.budget.Own = func(sig Signature) Signature {
		return Signature{Service: strings.Clone(sig.Service), Env: strings.Clone(sig.Env)}
	}
	s.reply.Store(&Reply{Body: encode(nil)})
	return s
}

// Reply is the current table.
func (s *Sampler) Reply() *Reply { return s.reply.Load() }

// pending is a signature's weight in a request, before it is added under the lock.
type pending struct {
	sig    Signature
	weight float64
	chunks int
}

// Count counts one request's chunks whose priority the tracer set automatically (0 or 1) for their
// root's signature, as the agent does: each weighs 1 / the rate it was already sampled at, plus
// its share of droppedP0, the chunks the tracer says it dropped (Datadog-Client-Dropped-P0-Traces).
// now is the request's time: the first count in a new bucket computes the rates.
func (s *Sampler) Count(now time.Time, payloads []payload.Payload, droppedP0 int64) Counted {
	var res Counted
	var buf [batchSize]pending
	batch := buf[:0]
	dropShare := 0.0
	if n := chunkCount(payloads); droppedP0 > 0 && n > 0 {
		dropShare = float64(droppedP0) / float64(n)
	}
	for pi := range payloads {
		p := &payloads[pi]
		for ci := range p.Chunks {
			c := &p.Chunks[ci]
			if len(c.Spans) == 0 {
				continue
			}
			root := c.Root()
			if prio, _, ok := c.SamplingPriority(root); !ok || (prio != autoReject && prio != autoKeep) {
				continue
			}
			sig := Signature{Service: cut(root.Service, maxServiceLen), Env: cut(envOf(p, c, root), maxEnvLen)}
			batch = gather(batch, sig, weightOf(root)+dropShare)
			if len(batch) == batchSize {
				s.add(now, batch, &res)
				batch = batch[:0]
			}
		}
	}
	if len(batch) > 0 {
		s.add(now, batch, &res)
	}
	return res
}

func chunkCount(payloads []payload.Payload) int {
	n := 0
	for i := range payloads {
		for j := range payloads[i].Chunks {
			if len(payloads[i].Chunks[j].Spans) > 0 {
				n++
			}
		}
	}
	return n
}

func gather(batch []pending, sig Signature, weight float64) []pending {
	for i := range batch {
		if batch[i].sig == sig {
			batch[i].weight += weight
			batch[i].chunks++
			return batch
		}
	}
	return append(batch, pending{sig: sig, weight: weight, chunks: 1})
}

// add counts a batch in the current bucket, after computing the rates if now is in a new one.
func (s *Sampler) add(now time.Time, batch []pending, res *Counted) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rotated := false
	for _, p := range batch {
		c := s.budget.Count(now, p.sig, p.weight)
		rotated = rotated || c.Rotated
		if c.Untracked {
			res.Untracked += p.chunks
		}
	}
	if rotated {
		// After counting, as the agent: the default rate sees the request that began the bucket.
		res.Rotated, res.Services = true, s.budget.Signatures()
		res.Changed = s.publish()
	}
}

func keysOf(sig Signature) keys {
	k := keys{key: quote("service:" + sig.Service + ",env:" + sig.Env)}
	// An empty service in the default env would be the default rate's own key.
	if sig.Env == DefaultEnv && sig.Service != "" {
		k.alias = quote("service:" + sig.Service + ",env:")
	}
	return k
}

func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil { // a string always encodes (invalid UTF-8 becomes U+FFFD)
		return `""`
	}
	return string(b)
}

// entry is one rate of the table, its key quoted.
type entry struct {
	key  string
	rate float64
}

// publish builds the table from the current rates, and gives it a new version if it changed.
func (s *Sampler) publish() bool {
	entries := make([]entry, 0, 2*s.budget.Signatures()+1)
	rated := make(map[Signature]keys, len(s.keys))
	for sig, rate := range s.budget.Rated() {
		k, ok := s.keys[sig]
		if !ok {
			k = keysOf(sig)
		}
		rated[sig] = k
		entries = append(entries, entry{k.key, rate})
		if k.alias != "" {
			entries = append(entries, entry{k.alias, rate})
		}
	}
	s.keys = rated
	// Tracers use it for pairs without a rate of their own: the share of the whole traffic,
	// never more than the most constrained pair's.
	entries = append(entries, entry{defaultKey, s.budget.DefaultRate()})
	body := encode(entries)
	old := s.reply.Load()
	if bytes.Equal(body, old.Body) && old.Version != "" {
		return false
	}
	s.updates++
	s.reply.Store(&Reply{Body: body, Version: s.prefix + "-" + strconv.FormatUint(s.updates, 10)})
	return true
}

const defaultKey = `"service:,env:"`

// encode writes the body: {"rate_by_service":{...}} and a newline, as the agent's JSON encoder,
// keys sorted so that equal tables are equal bytes. encoding/json took 10 ms for 5000 services.
func encode(entries []entry) []byte {
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	b := make([]byte, 0, 32+len(entries)*48)
	b = append(b, `{"rate_by_service":{`...)
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.key...)
		b = append(b, ':')
		b = strconv.AppendFloat(b, e.rate, 'g', -1, 64)
	}
	return append(b, "}}\n"...)
}
