package esstandin

import (
	"path"
	"strings"
)

// selector is a position in an Elasticsearch filter_path: what is kept below one key of a
// response. Supported: comma-separated dotted paths, "*" (and other path.Match globs) within a
// segment and "**" for any depth; arrays are transparent, as in Elasticsearch. Exclusions ("-path")
// are not supported and are ignored, so a response is never narrower than asked. Each key's
// selector is worked out once (a bulk response repeats the same keys for every item).
type selector struct {
	whole    bool       // everything below is kept
	patterns [][]string // what continues below, when not whole
	children map[string]*selector
}

// keepAll is the selector of a value kept whole.
var keepAll = &selector{whole: true}

// newSelector returns the root selector of a filter_path ("": keep everything).
func newSelector(filter string) *selector {
	patterns := parseFilter(filter)
	if len(patterns) == 0 {
		return keepAll
	}
	return &selector{patterns: patterns}
}

// child returns the selector of key, or nil when nothing below key is kept. A scalar is kept only
// when its selector is whole.
func (s *selector) child(key string) *selector {
	if s.whole {
		return s
	}
	if c, ok := s.children[key]; ok {
		return c
	}
	next, whole := advance(s.patterns, key)
	var c *selector
	switch {
	case whole:
		c = keepAll
	case len(next) > 0:
		c = &selector{patterns: next}
	}
	if s.children == nil {
		s.children = map[string]*selector{}
	}
	s.children[key] = c
	return c
}

// parseFilter splits a filter_path into patterns of path segments. Consecutive "**" mean what one
// does, and are merged: each "**" multiplies the patterns advance carries (a crafted filter of a
// hundred of them would otherwise cost exponential time).
func parseFilter(filter string) [][]string {
	var patterns [][]string
	for p := range strings.SplitSeq(filter, ",") {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "-") {
			continue
		}
		var segs []string
		for seg := range strings.SplitSeq(p, ".") {
			if seg == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue
			}
			segs = append(segs, seg)
		}
		patterns = append(patterns, segs)
	}
	return patterns
}

// advance moves every pattern past key: whole is true when some pattern ends at key (the value is
// kept as is); next holds the patterns that continue below it.
// The same remaining pattern reached in several ways is kept once, so the set stays bounded by the
// filter's suffixes.
func advance(patterns [][]string, key string) (next [][]string, whole bool) {
	seen := map[string]bool{}
	for _, p := range patterns {
		n, w := advanceOne(p, key)
		whole = whole || w
		for _, q := range n {
			if k := strings.Join(q, "."); !seen[k] {
				seen[k] = true
				next = append(next, q)
			}
		}
	}
	return next, whole
}

func advanceOne(p []string, key string) (next [][]string, whole bool) {
	if len(p) == 0 {
		return nil, false
	}
	if p[0] == "**" {
		if len(p) == 1 {
			return nil, true
		}
		// "**" either stays for a deeper level or is consumed here.
		n, w := advanceOne(p[1:], key)
		return append(n, p), w
	}
	if ok, _ := path.Match(p[0], key); !ok {
		return nil, false
	}
	if len(p) == 1 {
		return nil, true
	}
	return [][]string{p[1:]}, false
}
