package tracesamplingprocessor

import (
	"hash/fnv"
	"time"
)

// seenSet remembers signatures until they expire, in bounded memory: the memory of both rare
// samplers. Once it holds capacity signatures it folds them modulo capacity, as the Datadog
// agent's rare sampler does: unrelated signatures may then share a slot (one hides the other
// while it is remembered), but memory never grows past capacity entries.
type seenSet struct {
	expires  map[uint64]time.Time
	capacity uint64
	folded   bool
}

func newSeenSet(capacity int) *seenSet {
	return &seenSet{expires: make(map[uint64]time.Time), capacity: uint64(capacity)}
}

func (s *seenSet) key(sig uint64) uint64 {
	if s.folded {
		return sig % s.capacity
	}
	return sig
}

// seen reports whether sig is remembered at now.
func (s *seenSet) seen(sig uint64, now time.Time) bool {
	exp, ok := s.expires[s.key(sig)]
	return ok && now.Before(exp)
}

// remember keeps sig until now+ttl; it reports whether the set had to fold.
func (s *seenSet) remember(sig uint64, now time.Time, ttl time.Duration) (folded bool) {
	s.expires[s.key(sig)] = now.Add(ttl)
	if !s.folded && uint64(len(s.expires)) > s.capacity {
		s.fold()
		return true
	}
	return false
}

func (s *seenSet) fold() {
	folded := make(map[uint64]time.Time, s.capacity)
	for k, exp := range s.expires {
		if cur, ok := folded[k%s.capacity]; !ok || exp.After(cur) {
			folded[k%s.capacity] = exp
		}
	}
	s.expires, s.folded = folded, true
}

// tokenBucket allows rate events per second with a burst, on the caller's clock.
type tokenBucket struct {
	rate, burst, tokens float64
	last                time.Time
}

func newTokenBucket(rate, burst float64) *tokenBucket {
	return &tokenBucket{rate: rate, burst: burst, tokens: burst}
}

func (b *tokenBucket) allow(now time.Time) bool {
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// signature hashes strings into one 64-bit key, each part ended so that ("ab","c") and
// ("a","bc") differ.
func signature(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}
