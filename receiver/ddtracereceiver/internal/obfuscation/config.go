package obfuscation

import (
	"errors"
	"fmt"
	"slices"

	"github.com/DataDog/datadog-agent/pkg/obfuscate"
)

// Config is the receiver's obfuscation section. Each setting carries the name of the Datadog
// Agent's apm_config.obfuscation setting it stands for, and the agent's default.
type Config struct {
	// Enabled turns every rule below on or off at once. Default true.
	Enabled bool `mapstructure:"enabled"`

	// SQL obfuscates the resource and the query tags (sql.query, db.statement, db.query.text) of
	// spans of type sql and cassandra. The agent has no switch for it: it always does. Default true.
	SQL Switch `mapstructure:"sql"`

	// Redis obfuscates redis.raw_command on spans of type redis (apm_config.obfuscation.redis).
	// The resource of redis and valkey spans is reduced to its commands whatever this says, as
	// the agent does. Default enabled, remove_all_args false.
	Redis RedisConfig `mapstructure:"redis"`

	// Valkey obfuscates valkey.raw_command on spans of type valkey (apm_config.obfuscation.valkey).
	// Default enabled, remove_all_args false.
	Valkey RedisConfig `mapstructure:"valkey"`

	// Memcached obfuscates memcached.command on spans of type memcached
	// (apm_config.obfuscation.memcached). Default enabled, keep_command false.
	Memcached MemcachedConfig `mapstructure:"memcached"`

	// MongoDB obfuscates mongodb.query on spans of type mongodb (apm_config.obfuscation.mongodb).
	// Default enabled.
	MongoDB JSONConfig `mapstructure:"mongodb"`

	// Elasticsearch obfuscates elasticsearch.body on spans of type elasticsearch or opensearch
	// (apm_config.obfuscation.elasticsearch). Default enabled.
	Elasticsearch JSONConfig `mapstructure:"elasticsearch"`

	// OpenSearch obfuscates opensearch.body on spans of type elasticsearch or opensearch
	// (apm_config.obfuscation.opensearch). Default enabled.
	OpenSearch JSONConfig `mapstructure:"opensearch"`

	// CreditCards replaces tag values that look like card numbers with "?" on every span and
	// span event (apm_config.obfuscation.credit_cards). Default enabled, luhn false.
	CreditCards CreditCardsConfig `mapstructure:"credit_cards"`

	// HTTP shapes http.url on spans of type web and http (apm_config.obfuscation.http). User
	// and password in a URL are removed whatever this says, as the agent does. Default: both off.
	HTTP HTTPConfig `mapstructure:"http"`

	// Cache keeps obfuscated SQL statements for reuse (apm_config.obfuscation.cache): tracers
	// send the same few statements over and over. Default enabled, max_size 5000000 bytes.
	Cache CacheConfig `mapstructure:"cache"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Switch is a rule with nothing to set but whether it runs.
type Switch struct {
	Enabled bool `mapstructure:"enabled"`
}

// RedisConfig is the redis and valkey rule.
type RedisConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// RemoveAllArgs replaces all of a command's arguments with one "?" instead of the values only.
	RemoveAllArgs bool `mapstructure:"remove_all_args"`
}

// MemcachedConfig is the memcached rule.
type MemcachedConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// KeepCommand keeps the command line (without the stored value); false removes the tag.
	KeepCommand bool `mapstructure:"keep_command"`
}

// JSONConfig is a rule for JSON bodies: every value becomes "?".
type JSONConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// KeepValues are keys whose values are kept.
	KeepValues []string `mapstructure:"keep_values"`
	// ObfuscateSQLValues are keys whose values are SQL, obfuscated as SQL rather than replaced.
	ObfuscateSQLValues []string `mapstructure:"obfuscate_sql_values"`
}

// CreditCardsConfig is the card number rule.
type CreditCardsConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Luhn also checks the Luhn checksum, so fewer numbers that are not cards are hidden (about
	// three times the CPU time of the rule).
	Luhn bool `mapstructure:"luhn"`
	// KeepValues are tag keys never checked.
	KeepValues []string `mapstructure:"keep_values"`
}

// HTTPConfig is the URL rule.
type HTTPConfig struct {
	// RemoveQueryString replaces a URL's query string with "?".
	RemoveQueryString bool `mapstructure:"remove_query_string"`
	// RemovePathsWithDigits replaces path segments holding a digit with "?".
	RemovePathsWithDigits bool `mapstructure:"remove_paths_with_digits"`
}

// CacheConfig bounds the statement cache.
type CacheConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// MaxSize is the cache's size in bytes.
	MaxSize int64 `mapstructure:"max_size"`
}

// The Datadog Agent's default cache size, and the bounds of ours: below a few hundred bytes the
// library's cache cannot hold one statement (it sizes its counters from max_size / 330).
const (
	defaultCacheSize = 5_000_000
	minCacheSize     = 1 << 10
	maxCacheSize     = 1 << 30
)

// DefaultConfig is the Datadog Agent's default: every rule on, URLs kept but for their user
// information, card numbers checked without the Luhn checksum.
func DefaultConfig() Config {
	return Config{
		Enabled:       true,
		SQL:           Switch{Enabled: true},
		Redis:         RedisConfig{Enabled: true},
		Valkey:        RedisConfig{Enabled: true},
		Memcached:     MemcachedConfig{Enabled: true},
		MongoDB:       JSONConfig{Enabled: true},
		Elasticsearch: JSONConfig{Enabled: true},
		OpenSearch:    JSONConfig{Enabled: true},
		CreditCards:   CreditCardsConfig{Enabled: true},
		Cache:         CacheConfig{Enabled: true, MaxSize: defaultCacheSize},
	}
}

// Validate checks the cache size and that no key list holds an empty key. Errors name the key
// under obfuscation; the collector prefixes them with it.
func (c *Config) Validate() error {
	var errs []error
	if c.Cache.Enabled && (c.Cache.MaxSize < minCacheSize || c.Cache.MaxSize > maxCacheSize) {
		errs = append(errs, fmt.Errorf("cache.max_size must be between %d and %d bytes, got %d", minCacheSize, maxCacheSize, c.Cache.MaxSize))
	}
	for _, l := range []struct {
		key  string
		keys []string
	}{
		{"mongodb.keep_values", c.MongoDB.KeepValues},
		{"mongodb.obfuscate_sql_values", c.MongoDB.ObfuscateSQLValues},
		{"elasticsearch.keep_values", c.Elasticsearch.KeepValues},
		{"elasticsearch.obfuscate_sql_values", c.Elasticsearch.ObfuscateSQLValues},
		{"opensearch.keep_values", c.OpenSearch.KeepValues},
		{"opensearch.obfuscate_sql_values", c.OpenSearch.ObfuscateSQLValues},
		{"credit_cards.keep_values", c.CreditCards.KeepValues},
	} {
		if slices.Contains(l.keys, "") {
			errs = append(errs, fmt.Errorf("%s must not hold an empty key, got %q", l.key, l.keys))
		}
	}
	return errors.Join(errs...)
}

// library is the agent library's configuration for c. The SQL options are the agent's defaults
// (no table names, digits in identifiers kept, aliases removed, the tokenizer of its default
// mode): the sqllexer modes write to the obfuscator's shared options on every call, which
// concurrent requests must not do.
func (c *Config) library(withCache bool) obfuscate.Config {
	return obfuscate.Config{
		ES:         jsonLibrary(c.Elasticsearch),
		OpenSearch: jsonLibrary(c.OpenSearch),
		Mongo:      jsonLibrary(c.MongoDB),
		HTTP: obfuscate.HTTPConfig{
			RemoveQueryString: c.HTTP.RemoveQueryString,
			RemovePathDigits:  c.HTTP.RemovePathsWithDigits,
		},
		Redis:     obfuscate.RedisConfig{Enabled: c.Redis.Enabled, RemoveAllArgs: c.Redis.RemoveAllArgs},
		Valkey:    obfuscate.ValkeyConfig{Enabled: c.Valkey.Enabled, RemoveAllArgs: c.Valkey.RemoveAllArgs},
		Memcached: obfuscate.MemcachedConfig{Enabled: c.Memcached.Enabled, KeepCommand: c.Memcached.KeepCommand},
		CreditCard: obfuscate.CreditCardsConfig{
			Enabled: c.CreditCards.Enabled, Luhn: c.CreditCards.Luhn, KeepValues: c.CreditCards.KeepValues,
		},
		Cache: obfuscate.CacheConfig{Enabled: withCache && c.Cache.Enabled, MaxSize: c.Cache.MaxSize},
		// The cache reports its hit rate through this every 10 s, and the library hands it the
		// client before it replaces a missing one: without it, the first report would panic.
		Statsd: noStats{},
	}
}

func jsonLibrary(c JSONConfig) obfuscate.JSONConfig {
	return obfuscate.JSONConfig{Enabled: c.Enabled, KeepValues: c.KeepValues, ObfuscateSQLValues: c.ObfuscateSQLValues}
}

// noStats discards the library's cache gauges.
type noStats struct{}

func (noStats) Gauge(string, float64, []string, float64) error { return nil }
