// Package ratesampler computes the rate_by_service table the Datadog Agent sends to tracers: per
// (service, env) of the traces' roots, the share of traces a tracer should keep so that all of
// them together keep about a target number of traces per second. The algorithm is the agent's
// priority sampler (pkg/trace/sampler in github.com/DataDog/datadog-agent), written here: traces
// are counted in 6 buckets of 5 s; at the first count of a new bucket each pair's rate becomes its
// share of the target over the busiest of its last 6 buckets, rising by at most 20 % a bucket.
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

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// The agent's constants: a rate may grow 1.2× a bucket, so a 10-fold rise takes 13 buckets (about
// a minute), while a fall applies at once.
const (
	bucketSeconds = 5
	numBuckets    = 6
	maxIncrease   = 1.2
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
	target float64
	limit  int
	prefix string // makes versions unique per process, so replicas never share one

	mu      sync.Mutex
	sigs    map[Signature]*tracked
	total   ring // every counted chunk, tracked or not: the default rate's basis
	bucket  int64
	started bool
	updates uint64

	reply atomic.Pointer[Reply]
}

type tracked struct {
	seen ring
	rate float64 // 0 until the first computation that saw the signature
	// The signature's keys in the table, quoted for JSON once: "service:S,env:E", and
	// "service:S,env:" when E is DefaultEnv (else empty).
	key, alias string
}

// New returns a sampler with cfg's target and limit, replying with an empty table (tracers then
// keep their own default, 1) until the first traces are counted.
func New(cfg Config) *Sampler {
	s := &Sampler{
		target: cfg.TargetTracesPerSecond,
		limit:  cfg.MaxServices,
		prefix: rand.Text()[:8],
		sigs:   make(map[Signature]*tracked),
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
			if prio, ok := priorityOf(c, root); !ok || (prio != autoReject && prio != autoKeep) {
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
	rotated := s.advance(now.Unix() / bucketSeconds)
	i := slot(s.bucket)
	for _, p := range batch {
		s.total[i] += p.weight
		t := s.sigs[p.sig]
		if t == nil {
			if len(s.sigs) >= s.limit {
				res.Untracked += p.chunks
				continue
			}
			t = newTracked(p.sig)
			// The strings point into the request's body: copies keep it from being retained.
			s.sigs[Signature{Service: strings.Clone(p.sig.Service), Env: strings.Clone(p.sig.Env)}] = t
		}
		t.seen[i] += p.weight
	}
	if rotated {
		// After counting, as the agent: the default rate sees the request that began the bucket.
		res.Rotated, res.Services = true, len(s.sigs)
		res.Changed = s.publish()
	}
}

// advance moves to bucket cur and computes every signature's rate from the buckets before it. A
// clock that went back keeps counting in the current bucket.
func (s *Sampler) advance(cur int64) bool {
	if !s.started {
		s.started, s.bucket = true, cur
		return true
	}
	if cur <= s.bucket {
		return false
	}
	sigs := make([]*tracked, 0, len(s.sigs))
	keys := make([]Signature, 0, len(s.sigs))
	tps := make([]float64, 0, len(s.sigs))
	for k, t := range s.sigs {
		sigs, keys = append(sigs, t), append(keys, k)
		tps = append(tps, t.seen.advance(s.bucket, cur)/bucketSeconds)
	}
	s.total.advance(s.bucket, cur)
	s.bucket = cur
	part := share(s.target, tps)
	for i, t := range sigs {
		t.rate = nextRate(t.rate, part, tps[i])
		if t.rate == 1 && tps[i] == 0 {
			delete(s.sigs, keys[i]) // quiet and unconstrained: nothing to tell its tracers
		}
	}
	return true
}

// nextRate is a signature's rate for the next bucket: its part of the target over what it sent,
// at most 1, and at most maxIncrease × the previous rate.
func nextRate(prev, part, tps float64) float64 {
	rate := 1.0
	if tps > part {
		rate = part / tps
	}
	if prev > 0 && rate > prev*maxIncrease {
		rate = prev * maxIncrease
	}
	return min(rate, 1)
}

// share splits target evenly over the signatures' traces per second; what a signature below its
// part leaves unused is split again among the busier ones. It returns the part of the busiest.
func share(target float64, tps []float64) float64 {
	sorted := slices.Clone(tps)
	slices.Sort(sorted)
	left := target
	for i, v := range sorted {
		part := left / float64(len(sorted)-i)
		if v >= part || i == len(sorted)-1 {
			return part
		}
		left -= v
	}
	return target
}

func newTracked(sig Signature) *tracked {
	t := &tracked{key: quote("service:" + sig.Service + ",env:" + sig.Env)}
	// An empty service in the default env would be the default rate's own key.
	if sig.Env == DefaultEnv && sig.Service != "" {
		t.alias = quote("service:" + sig.Service + ",env:")
	}
	return t
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
	entries := make([]entry, 0, 2*len(s.sigs)+1)
	lowest := 1.0
	for _, t := range s.sigs {
		if t.rate == 0 {
			continue // first seen in this bucket: no rate yet
		}
		lowest = min(lowest, t.rate)
		entries = append(entries, entry{t.key, t.rate})
		if t.alias != "" {
			entries = append(entries, entry{t.alias, t.rate})
		}
	}
	// Tracers use it for pairs without a rate of their own: the share of the whole traffic,
	// never more than the most constrained pair's.
	def := 1.0
	if all := s.total.peak() / bucketSeconds; all > s.target {
		def = s.target / all
	}
	entries = append(entries, entry{defaultKey, min(def, lowest)})
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

// ring holds a count per bucket, the bucket id modulo numBuckets.
type ring [numBuckets]float64

func slot(id int64) int { return int((id%numBuckets + numBuckets) % numBuckets) }

// advance moves the ring from bucket prev to cur (cur > prev): it returns the largest count of the
// numBuckets buckets before cur, and clears every bucket older than those, and cur's.
func (r *ring) advance(prev, cur int64) float64 {
	peak := 0.0
	for id := prev - numBuckets + 1; id <= prev; id++ {
		if id >= cur-numBuckets {
			peak = max(peak, r[slot(id)])
		} else {
			r[slot(id)] = 0
		}
	}
	r[slot(cur)] = 0
	return peak
}

func (r *ring) peak() float64 {
	p := 0.0
	for _, v := range r {
		p = max(p, v)
	}
	return p
}
