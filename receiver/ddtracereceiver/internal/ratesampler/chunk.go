package ratesampler

import (
	"unicode/utf8"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// DefaultEnv is the env of traces that carry none: the Datadog Agent's default_env, which
// tracegate's /info reports too. Rates for it are also sent with an empty env, which is what a
// tracer without DD_ENV looks up.
const DefaultEnv = "none"

// The agent's limits on a service name and a tag value: longer names are cut, so that a hostile
// tracer cannot make the rate table large.
const (
	maxServiceLen = 100
	maxEnvLen     = 200
)

// Tracer priorities the rates act on: the tracer's own automatic decisions. Priorities set by a
// user or a sampling rule (2, -1) are what the user asked for, and are not counted.
const (
	autoReject = 0
	autoKeep   = 1
)

// The metrics of the rates a trace was already sampled at (the tracer's _sample_rate, an upstream
// agent's pre-sampler rate).
const (
	clientRateMetric = "_sample_rate"
	preSamplerMetric = "_dd1.sr.rapre"
)

// envOf is the chunk's env: the payload's (v0.7), else the root's env tag, else another span's,
// else DefaultEnv.
func envOf(p *payload.Payload, c *payload.Chunk, root *payload.Span) string {
	if p.Env != "" {
		return p.Env
	}
	if env, ok := root.MetaValue("env"); ok && env != "" {
		return env
	}
	for i := range c.Spans {
		if env, ok := c.Spans[i].MetaValue("env"); ok && env != "" {
			return env
		}
	}
	return DefaultEnv
}

// weightOf is how many traces the chunk stands for: 1 / the rates it was already sampled at, each
// taken only when it is a rate (in (0, 1]).
func weightOf(root *payload.Span) float64 {
	return 1 / (rateMetric(root, clientRateMetric) * rateMetric(root, preSamplerMetric))
}

func rateMetric(s *payload.Span, key string) float64 {
	if r, ok := s.Metric(key); ok && r > 0 && r <= 1 {
		return r
	}
	return 1
}

// cut shortens s to at most n bytes, at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
