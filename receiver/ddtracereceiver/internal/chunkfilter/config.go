// Package chunkfilter drops trace chunks as the Datadog Agent's ignore_resources, filter_tags and
// filter_tags_regex settings do (the chunk's root span decides for the whole chunk), and the
// chunks their tracer rejected, as the agent's sampling drops them.
package chunkfilter

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Config holds the filters under the names of the agent's apm_config settings.
type Config struct {
	// IgnoreResources drops a chunk whose root span's resource matches any of these regular
	// expressions (apm_config.ignore_resources; unanchored, as the agent's). Default none.
	IgnoreResources []string `mapstructure:"ignore_resources"`

	// FilterTags keeps or drops a chunk by the exact tags of its root span
	// (apm_config.filter_tags). Default none.
	FilterTags TagRules `mapstructure:"filter_tags"`

	// FilterTagsRegex is FilterTags with a regular expression for the value
	// (apm_config.filter_tags_regex). Default none.
	FilterTagsRegex TagRules `mapstructure:"filter_tags_regex"`
}

// TagRules are the two lists of a tag filter. Each entry is "key" (the tag is present, whatever
// its value) or "key:value" (split at the first colon, both sides trimmed).
type TagRules struct {
	// Require drops a chunk whose root lacks any of these tags.
	Require []string `mapstructure:"require"`
	// Reject drops a chunk whose root has any of these tags.
	Reject []string `mapstructure:"reject"`
}

// Enabled tells whether any filter is set.
func (c *Config) Enabled() bool {
	return len(c.IgnoreResources)+len(c.FilterTags.Require)+len(c.FilterTags.Reject)+
		len(c.FilterTagsRegex.Require)+len(c.FilterTagsRegex.Reject) > 0
}

// exactTag is a parsed filter_tags entry; an empty value matches any value.
type exactTag struct{ key, value string }

// regexTag is a parsed filter_tags_regex entry; a nil value matches any value.
type regexTag struct {
	key   string
	value *regexp.Regexp
}

// splitEntry cuts "key:value" at the first colon and trims both sides.
func splitEntry(entry string) (key, value string, hasValue bool) {
	key, value, hasValue = strings.Cut(entry, ":")
	return strings.TrimSpace(key), strings.TrimSpace(value), hasValue
}

func parseExact(setting string, entries []string) ([]exactTag, error) {
	var tags []exactTag
	var errs []error
	for _, e := range entries {
		k, v, _ := splitEntry(e)
		if k == "" {
			errs = append(errs, fmt.Errorf("%s: %q names no tag key", setting, e))
			continue
		}
		tags = append(tags, exactTag{key: k, value: v})
	}
	return tags, errors.Join(errs...)
}

func parseRegex(setting string, entries []string) ([]regexTag, error) {
	var tags []regexTag
	var errs []error
	for _, e := range entries {
		k, v, hasValue := splitEntry(e)
		if k == "" {
			errs = append(errs, fmt.Errorf("%s: %q names no tag key", setting, e))
			continue
		}
		t := regexTag{key: k}
		if hasValue {
			re, err := regexp.Compile(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q: %w", setting, e, err))
				continue
			}
			t.value = re
		}
		tags = append(tags, t)
	}
	return tags, errors.Join(errs...)
}

func parseResources(patterns []string) ([]*regexp.Regexp, error) {
	var res []*regexp.Regexp
	var errs []error
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("ignore_resources: %q: %w", p, err))
			continue
		}
		res = append(res, re)
	}
	return res, errors.Join(errs...)
}
