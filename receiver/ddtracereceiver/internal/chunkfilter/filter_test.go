package chunkfilter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// root is a root span with the given resource and meta pairs.
func root(resource string, meta ...string) *payload.Span {
	s := &payload.Span{Name: "web.request", Resource: resource}
	for i := 0; i+1 < len(meta); i += 2 {
		s.Meta = append(s.Meta, payload.KV{Key: meta[i], Value: meta[i+1]})
	}
	return s
}

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		root *payload.Span
		want Reason
	}{
		{"no filters", Config{}, root("GET /health"), Kept},
		{"resource matches", Config{IgnoreResources: []string{"^GET /health$"}}, root("GET /health"), IgnoredResource},
		{"resource regexes are not anchored", Config{IgnoreResources: []string{"health"}}, root("GET /healthz"), IgnoredResource},
		{"any resource regex", Config{IgnoreResources: []string{"^nope$", "ping"}}, root("GET /ping"), IgnoredResource},
		{"resource does not match", Config{IgnoreResources: []string{"^GET /health$"}}, root("GET /users"), Kept},
		{"no resource: the name stands for it", Config{IgnoreResources: []string{"^web\\.request$"}}, root(""), IgnoredResource},
		{"reject by key", Config{FilterTags: TagRules{Reject: []string{"http.useragent"}}}, root("r", "http.useragent", "kube-probe/1.30"), RejectedTag},
		{"reject by key and value", Config{FilterTags: TagRules{Reject: []string{"env:staging"}}}, root("r", "env", "staging"), RejectedTag},
		{"reject: another value is kept", Config{FilterTags: TagRules{Reject: []string{"env:staging"}}}, root("r", "env", "prod"), Kept},
		{"reject: absent key is kept", Config{FilterTags: TagRules{Reject: []string{"env:staging"}}}, root("r"), Kept},
		{"reject: spaces around the colon", Config{FilterTags: TagRules{Reject: []string{" env : staging "}}}, root("r", "env", "staging"), RejectedTag},
		{"reject: the value may hold colons", Config{FilterTags: TagRules{Reject: []string{"peer:host:9200"}}}, root("r", "peer", "host:9200"), RejectedTag},
		{"reject: the last value of a repeated key", Config{FilterTags: TagRules{Reject: []string{"env:staging"}}}, root("r", "env", "staging", "env", "prod"), Kept},
		{"require by key: present", Config{FilterTags: TagRules{Require: []string{"team"}}}, root("r", "team", "a"), Kept},
		{"require by key: absent", Config{FilterTags: TagRules{Require: []string{"team"}}}, root("r"), MissingRequiredTag},
		{"require by value: other value", Config{FilterTags: TagRules{Require: []string{"env:prod"}}}, root("r", "env", "dev"), MissingRequiredTag},
		{"require every entry", Config{FilterTags: TagRules{Require: []string{"env:prod", "team"}}}, root("r", "env", "prod"), MissingRequiredTag},
		{"reject wins over require", Config{FilterTags: TagRules{Require: []string{"env:prod"}, Reject: []string{"env"}}}, root("r", "env", "prod"), RejectedTag},
		{"resource before tags", Config{IgnoreResources: []string{"r"}, FilterTags: TagRules{Reject: []string{"env"}}}, root("r", "env", "x"), IgnoredResource},
		{"reject regex", Config{FilterTagsRegex: TagRules{Reject: []string{"http.url:/internal/"}}}, root("r", "http.url", "http://a/internal/x"), RejectedTag},
		{"reject regex: key only", Config{FilterTagsRegex: TagRules{Reject: []string{"synthetics"}}}, root("r", "synthetics", ""), RejectedTag},
		{"reject regex: no match", Config{FilterTagsRegex: TagRules{Reject: []string{"env:^stag"}}}, root("r", "env", "prod"), Kept},
		{"require regex: match", Config{FilterTagsRegex: TagRules{Require: []string{"env:^prod-[0-9]+$"}}}, root("r", "env", "prod-2"), Kept},
		{"require regex: no match", Config{FilterTagsRegex: TagRules{Require: []string{"env:^prod-[0-9]+$"}}}, root("r", "env", "prod"), MissingRequiredTag},
		{"require regex: absent", Config{FilterTagsRegex: TagRules{Require: []string{"env:.*"}}}, root("r"), MissingRequiredTag},
		{"metrics are not tags", Config{FilterTags: TagRules{Require: []string{"_sampling_priority_v1"}}}, &payload.Span{Metrics: []payload.KF{{Key: "_sampling_priority_v1", Value: 1}}}, MissingRequiredTag},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.cfg)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f.Decide(tt.root))
		})
	}
}

func TestNilFilterKeepsEverything(t *testing.T) {
	f, err := New(Config{})
	require.NoError(t, err)
	assert.Nil(t, f)
	assert.Equal(t, Kept, f.Decide(root("r")))
	p := []payload.Payload{{Chunks: []payload.Chunk{{Spans: []payload.Span{{}}}}}}
	assert.Equal(t, Counts{}, f.Payloads(p))
	assert.Len(t, p[0].Chunks, 1)
}

func TestNewRefusesBadEntries(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bad resource regex", Config{IgnoreResources: []string{"GET /(health"}}, "ignore_resources: \"GET /(health\": error parsing regexp: missing closing ): `GET /(health`"},
		{"bad value regex", Config{FilterTagsRegex: TagRules{Require: []string{"env:[prod"}}}, "filter_tags_regex.require: \"env:[prod\": error parsing regexp: missing closing ]: `[prod`"},
		{"no key", Config{FilterTags: TagRules{Reject: []string{":staging"}}}, "filter_tags.reject: \":staging\" names no tag key"},
		{"no key in a regex entry", Config{FilterTagsRegex: TagRules{Reject: []string{" "}}}, "filter_tags_regex.reject: \" \" names no tag key"},
		{"every error", Config{IgnoreResources: []string{"("}, FilterTags: TagRules{Require: []string{""}}}, "ignore_resources: \"(\": error parsing regexp: missing closing ): `(`\nfilter_tags.require: \"\" names no tag key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			assert.EqualError(t, err, tt.want)
		})
	}
	good := Config{IgnoreResources: []string{"^GET /health$"}, FilterTags: TagRules{Require: []string{"env:prod"}}, FilterTagsRegex: TagRules{Reject: []string{"http.url:^/internal"}}}
	_, err := New(good)
	assert.NoError(t, err)
}

func TestPayloadsDropsChunksAndCounts(t *testing.T) {
	f, err := New(Config{IgnoreResources: []string{"^GET /health$"}, FilterTags: TagRules{Reject: []string{"synthetic:true"}}})
	require.NoError(t, err)
	chunk := func(resource string, spans int, meta ...string) payload.Chunk {
		c := payload.Chunk{Spans: make([]payload.Span, spans)}
		for i := range c.Spans {
			c.Spans[i] = payload.Span{SpanID: uint64(i + 1), ParentID: uint64(i), Resource: "child"}
		}
		c.Spans[0] = *root(resource, meta...)
		c.Spans[0].SpanID = 1
		return c
	}
	payloads := []payload.Payload{
		{Chunks: []payload.Chunk{chunk("GET /health", 2), chunk("GET /users", 3), chunk("GET /a", 4, "synthetic", "true")}},
		{Chunks: []payload.Chunk{chunk("GET /health", 1)}},
		{Chunks: []payload.Chunk{{}}}, // no spans: no root, kept for the translation to count
	}
	c := f.Payloads(payloads)
	assert.Equal(t, [NumReasons]int{IgnoredResource: 2, RejectedTag: 1}, c.Chunks)
	assert.Equal(t, [NumReasons]int{IgnoredResource: 3, RejectedTag: 4}, c.Spans)
	require.Len(t, payloads[0].Chunks, 1)
	assert.Equal(t, "GET /users", payloads[0].Chunks[0].Root().Resource)
	assert.Empty(t, payloads[1].Chunks)
	assert.Len(t, payloads[2].Chunks, 1)
}

func TestDropRejected(t *testing.T) {
	chunk := func(priority int32, metric float64, spans int) payload.Chunk {
		c := payload.Chunk{Priority: priority, Spans: make([]payload.Span, spans)}
		for i := range c.Spans {
			c.Spans[i] = payload.Span{SpanID: uint64(i + 1), ParentID: uint64(i)}
		}
		if metric != 0 {
			c.Spans[0].Metrics = []payload.KF{{Key: payload.PriorityMetric, Value: metric}}
		}
		return c
	}
	none := int32(payload.PriorityNone)
	payloads := []payload.Payload{
		{Chunks: []payload.Chunk{chunk(-1, 0, 2), chunk(0, 0, 3), chunk(-3, 0, 1), chunk(2, 0, 1)}}, // v0.7
		{Chunks: []payload.Chunk{chunk(none, -1, 4), chunk(none, 1, 2), chunk(none, 0, 1)}},         // v0.4: no metric, no priority
		{Chunks: []payload.Chunk{{Priority: -1}}},                                                   // no spans: nothing to drop
	}
	c := DropRejected(payloads)
	assert.Equal(t, [NumReasons]int{RejectedPriority: 3}, c.Chunks)
	assert.Equal(t, [NumReasons]int{RejectedPriority: 7}, c.Spans)
	require.Len(t, payloads[0].Chunks, 2)
	assert.Equal(t, []int32{0, 2}, []int32{payloads[0].Chunks[0].Priority, payloads[0].Chunks[1].Priority})
	require.Len(t, payloads[1].Chunks, 2)
	assert.Len(t, payloads[1].Chunks[0].Spans, 2, "priority 1")
	assert.Len(t, payloads[1].Chunks[1].Spans, 1, "no priority")
	assert.Len(t, payloads[2].Chunks, 1)
}

func TestReasonNames(t *testing.T) {
	for r, want := range map[Reason]string{Kept: "kept", IgnoredResource: "ignore_resources", RejectedTag: "filter_tags_reject", MissingRequiredTag: "filter_tags_require", RejectedPriority: "priority_user_reject"} {
		assert.Equal(t, want, r.String())
	}
}
