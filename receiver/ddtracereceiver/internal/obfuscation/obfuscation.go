// Package obfuscation hides what Datadog spans carry of the data their services handle (SQL
// literals, cache keys' values, query bodies, card numbers) by the Datadog Agent's rules and with
// its library (github.com/DataDog/datadog-agent/pkg/obfuscate), on decoded spans before they are
// translated: the resource, the span name made from it and every attribute get the obfuscated
// value, and statements group by their shape wherever spans are aggregated, as in the agent's stats.
package obfuscation

import (
	"slices"
	"strings"

	"github.com/DataDog/datadog-agent/pkg/obfuscate"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// NonParsableSQL replaces a statement the library cannot parse, as the agent does: a statement
// that cannot be parsed cannot be cleaned of its literals either.
const NonParsableSQL = "Non-parsable SQL query"

// Rule names what a rule hides; its String is its key in the configuration.
type Rule uint8

// The rules, in the order of the configuration.
const (
	RuleSQL Rule = iota
	RuleRedis
	RuleValkey
	RuleMemcached
	RuleMongoDB
	RuleElasticsearch
	RuleOpenSearch
	RuleHTTP
	RuleCreditCards
	NumRules
)

var ruleNames = [NumRules]string{"sql", "redis", "valkey", "memcached", "mongodb", "elasticsearch", "opensearch", "http", "credit_cards"}

func (r Rule) String() string { return ruleNames[r] }

// Counts is what obfuscating a request's payloads did.
type Counts struct {
	// Spans counts, by rule, the spans in which the rule changed a value.
	Spans [NumRules]int64
	// UnparsableSQL counts the spans with a statement replaced by NonParsableSQL.
	UnparsableSQL int64
}

// Obfuscator applies the rules of a Config. Its methods may be called from concurrent requests:
// the library's obfuscator keeps no per-call state in the mode used here (its statement cache is
// safe for concurrent use and its one flag is atomic).
type Obfuscator struct {
	cfg    Config
	lib    *obfuscate.Obfuscator
	cached bool // lib has the statement cache, whose goroutines Shutdown stops
}

// New returns an obfuscator for cfg, without the statement cache until Start: the cache runs
// goroutines, which a component starts in Start only.
func New(cfg Config) *Obfuscator {
	return &Obfuscator{cfg: cfg, lib: obfuscate.NewObfuscator(cfg.library(false))}
}

// Start switches to an obfuscator with the statement cache when the configuration asks for one.
// Call it before the first Payloads that may run concurrently with it.
func (o *Obfuscator) Start() {
	if o.cached || !o.cfg.Enabled || !o.cfg.SQL.Enabled || !o.cfg.Cache.Enabled {
		return
	}
	o.lib, o.cached = obfuscate.NewObfuscator(o.cfg.library(true)), true
}

// Shutdown stops the statement cache's goroutines. Call it once no Payloads runs any more.
func (o *Obfuscator) Shutdown() {
	if o.cached {
		o.lib.Stop()
		o.lib, o.cached = obfuscate.NewObfuscator(o.cfg.library(false)), false
	}
}

// Payloads obfuscates every span of ps in place.
func (o *Obfuscator) Payloads(ps []payload.Payload) Counts {
	var c Counts
	if !o.cfg.Enabled {
		return c
	}
	for i := range ps {
		for _, chunk := range ps[i].Chunks {
			for k := range chunk.Spans {
				o.span(&chunk.Spans[k], &c) // the slice shares the payload's spans
			}
		}
	}
	return c
}

// span applies the card rule to every span, then the rule of the span's type, as the agent does.
func (o *Obfuscator) span(s *payload.Span, c *Counts) {
	if o.cfg.CreditCards.Enabled && o.cards(s) {
		c.Spans[RuleCreditCards]++
	}
	rule, changed := NumRules, false
	switch s.Type {
	case "sql", "cassandra":
		if !o.cfg.SQL.Enabled {
			return
		}
		var unparsable bool
		rule = RuleSQL
		changed, unparsable = o.sql(s)
		if unparsable {
			c.UnparsableSQL++
		}
	case "redis":
		rule, changed = RuleRedis, o.redis(s, "redis.raw_command", o.cfg.Redis)
	case "valkey":
		rule, changed = RuleValkey, o.redis(s, "valkey.raw_command", o.cfg.Valkey)
	case "memcached":
		rule, changed = RuleMemcached, o.cfg.Memcached.Enabled && o.memcached(s)
	case "web", "http":
		rule, changed = RuleHTTP, o.url(s)
	case "mongodb":
		rule, changed = RuleMongoDB, o.cfg.MongoDB.Enabled && replaceTag(s, "mongodb.query", o.lib.ObfuscateMongoDBString)
	case "elasticsearch", "opensearch":
		// Both bodies on both types: OpenSearch clients may report the type elasticsearch.
		if o.cfg.Elasticsearch.Enabled && replaceTag(s, "elasticsearch.body", o.lib.ObfuscateElasticSearchString) {
			c.Spans[RuleElasticsearch]++
		}
		rule, changed = RuleOpenSearch, o.cfg.OpenSearch.Enabled && replaceTag(s, "opensearch.body", o.lib.ObfuscateOpenSearchString)
	}
	if changed {
		c.Spans[rule]++
	}
}

// isKey reports whether a tag key is want, in any case: the translator maps keys whatever
// their case, so a statement under SQL.QUERY would otherwise be stored as it came.
func isKey(k, want string) bool { return len(k) == len(want) && strings.EqualFold(k, want) }

// replaceTag replaces every non-empty value of key with f's result (a repeated key is replaced in
// each of its places) and reports whether one changed.
func replaceTag(s *payload.Span, key string, f func(string) string) bool {
	changed := false
	for i := range s.Meta {
		kv := &s.Meta[i]
		if kv.Value == "" || !isKey(kv.Key, key) {
			continue
		}
		if out := f(kv.Value); out != kv.Value {
			kv.Value, changed = out, true
		}
	}
	return changed
}

// sql obfuscates the resource and the tags that carry the statement. A tag equal to the resource
// gets the resource's result; another is obfuscated on its own (the agent's rule for the
// OpenTelemetry names db.statement and db.query.text). It reports whether a value changed and
// whether a statement could not be parsed.
func (o *Obfuscator) sql(s *payload.Span) (changed, unparsable bool) {
	resource, obfuscated := s.Resource, ""
	if resource != "" {
		obfuscated, unparsable = o.statement(resource)
		s.Resource, changed = obfuscated, obfuscated != resource
	}
	for i := range s.Meta {
		kv := &s.Meta[i]
		if kv.Value == "" || !isStatementKey(kv.Key) {
			continue
		}
		out := obfuscated
		if kv.Value != resource {
			var bad bool
			out, bad = o.statement(kv.Value)
			unparsable = unparsable || bad
		}
		if out != kv.Value {
			kv.Value, changed = out, true
		}
	}
	return changed, unparsable
}

// isStatementKey reports whether a tag carries the statement: the agent's sql.query, and the
// OpenTelemetry names that tracers' bridges and the translator use.
func isStatementKey(k string) bool {
	return isKey(k, "sql.query") || isKey(k, "db.statement") || isKey(k, string(semconv.DBQueryTextKey))
}

// statement obfuscates one SQL or CQL statement. The agent passes the span's db.type too, which
// only the library's sqllexer modes read; the tokenizer used here does not.
func (o *Obfuscator) statement(q string) (string, bool) {
	oq, err := o.lib.ObfuscateSQLString(q)
	if err != nil {
		return NonParsableSQL, true
	}
	return oq.Query, false
}

// redis reduces the resource to its commands (the agent does so whatever the rule's setting) and,
// when the rule is on, hides the arguments in the raw command tag.
func (o *Obfuscator) redis(s *payload.Span, key string, cfg RedisConfig) bool {
	changed := false
	if q := o.lib.QuantizeRedisString(s.Resource); q != s.Resource {
		s.Resource, changed = q, true
	}
	if !cfg.Enabled {
		return changed
	}
	f := o.lib.ObfuscateRedisString
	if cfg.RemoveAllArgs {
		f = o.lib.RemoveAllRedisArgs
	}
	return replaceTag(s, key, f) || changed
}

// memcached keeps the command line of memcached.command, or removes the tag: the agent leaves it
// empty, and an empty attribute says nothing. Removing shifts the span's own meta in place.
func (o *Obfuscator) memcached(s *payload.Span) bool {
	changed := replaceTag(s, "memcached.command", o.lib.ObfuscateMemcachedString)
	n := len(s.Meta)
	s.Meta = slices.DeleteFunc(s.Meta, func(kv payload.KV) bool {
		return kv.Value == "" && isKey(kv.Key, "memcached.command")
	})
	return changed || len(s.Meta) != n
}

// url removes the user information from http.url and, when configured, its query string and the
// path segments holding digits. With neither option only the user information goes, and a URL
// without "@" has none: the library's parse and re-serialization are skipped.
func (o *Obfuscator) url(s *payload.Span) bool {
	options := o.cfg.HTTP.RemoveQueryString || o.cfg.HTTP.RemovePathsWithDigits
	return replaceTag(s, "http.url", func(u string) string {
		if !options && strings.IndexByte(u, '@') < 0 {
			return u
		}
		return o.lib.ObfuscateURLString(u)
	})
}
